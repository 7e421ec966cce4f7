import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { ShownSafely } from "./components/ShownSafely";
import { warmSpare } from "./runtime/spares";
import { sessionConfig } from "./runtime/session-config";
import { loadSettings } from "./storage/settings";
import { routeFromHash } from "./route";
import "./styles.css";

// Start loading Python before the interface renders: the first session takes this worker. It is
// made for the page being opened: the Playground's Python has network, a conversation's has
// none unless the person allows it (a worker for another configuration would go unused).
loadSettings()
  .then((settings) => warmSpare(sessionConfig(settings, { allowInput: true, network: routeFromHash() === "playground" })))
  .catch(() => undefined);

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <ShownSafely what="page" shows={null}>
      <App />
    </ShownSafely>
  </StrictMode>,
);
