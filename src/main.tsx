import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { warmSpare } from "./runtime/python-worker";
import { sessionConfig } from "./runtime/session-config";
import { loadSettings } from "./storage/settings";
import "./styles.css";

// Start loading Python before the interface renders: the first session takes this worker.
loadSettings()
  .then((settings) => warmSpare(sessionConfig(settings, { allowInput: true, network: true })))
  .catch(() => undefined);

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
