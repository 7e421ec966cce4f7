/**
 * `embed.html`: the widget other sites embed in an iframe. No key, no chat: an editor,
 * Run and Stop, the output, and the postMessage protocol of protocol.ts.
 */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { DEFAULT_SETTINGS } from "../storage/settings";
import { EmbedController } from "./controller";
import { HostLink } from "./host-link";
import { parseEmbedParams } from "./protocol";
import { Widget } from "./Widget";
import "../styles.css";
import "./embed.css";

const params = parseEmbedParams(location.search);
// Opened on its own (a link, not a frame), the widget runs nothing until the person presses
// Run: a link must not run code in their browser, and no other window may drive it.
const framed = window.parent !== window;
const options = { ...params, autorun: params.autorun && framed };
const controller = new EmbedController(options, {
  lockFileUrl: DEFAULT_SETTINGS.lockFileUrl,
  packageBaseUrl: DEFAULT_SETTINGS.packageBaseUrl,
  outputLimitBytes: DEFAULT_SETTINGS.outputLimitKiB * 1024,
  timeoutMs: DEFAULT_SETTINGS.runTimeoutSeconds * 1000,
  allowInput: true,
  // The host page's code may use the network, as code on the host page itself could.
  network: true,
  // A page may hold many widgets that are never run: a spare loads once one is.
  spare: "on-first-run",
});
const link = new HostLink(options.origins, (message, origin) => controller.handle(message, origin));
controller.connect(link);

// The host sizes the frame to fit: report the document's height whenever it changes.
let lastHeight = 0;
new ResizeObserver(() => {
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height === lastHeight) return;
  lastHeight = height;
  link.post({ kiln: 1, type: "resize", height });
}).observe(document.documentElement);

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Widget controller={controller} readOnly={options.readonly} />
  </StrictMode>,
);
