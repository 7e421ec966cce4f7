/**
 * `embed.html`: the widget other sites embed in an iframe. No key, no chat: an editor,
 * Run and Stop, the output, and the postMessage protocol of protocol.ts. Made by `embed.js`
 * for a `<pre class="kiln">` (its URL fragment says so, see cell-config.ts), it is a cell of a
 * session that the page's cells share, and starts no Python before its session's first run.
 */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { DEFAULT_SETTINGS } from "../storage/settings";
import type { SessionConfig } from "../runtime/session-config";
import { parseCellFragment, type CellConfig } from "./cell-config";
import { EmbedController } from "./controller";
import { HostLink } from "./host-link";
import { parseEmbedParams, type EmbedOptions } from "./protocol";
import { SessionHost, type SessionClient } from "./shared-session";
import { RemoteSession, serveSiblings } from "./siblings";
import { Widget } from "./Widget";
import "../styles.css";
import "./embed.css";

const params = parseEmbedParams(location.search);
const cell = parseCellFragment(location.hash);
// Opened on its own (a link, not a frame), the widget runs nothing until the person presses
// Run: a link must not run code in their browser, and no other window may drive it.
const framed = window.parent !== window;
const options: EmbedOptions = cell
  ? {
      code: cell.code,
      autorun: cell.autorun && framed,
      readonly: cell.readonly,
      // The page that made the cell is the one it talks to (unless `origins` says otherwise).
      origins: params.origins.any && cell.hostOrigin ? { any: false, origins: [cell.hostOrigin] } : params.origins,
    }
  : { ...params, autorun: params.autorun && framed };
const config: SessionConfig = {
  lockFileUrl: DEFAULT_SETTINGS.lockFileUrl,
  packageBaseUrl: DEFAULT_SETTINGS.packageBaseUrl,
  outputLimitBytes: DEFAULT_SETTINGS.outputLimitKiB * 1024,
  timeoutMs: DEFAULT_SETTINGS.runTimeoutSeconds * 1000,
  allowInput: true,
  // The host page's code may use the network, as code on the host page itself could.
  network: true,
  // A page may hold many widgets that are never run: a spare loads once one is.
  spare: "on-first-run",
};

const controller = new EmbedController(options, sessionFor(cell), cell && { number: cell.number, name: cell.name, check: cell.check });
const link = new HostLink(options.origins, (message, origin) => controller.handle(message, origin));
controller.connect(link);
followTheme(cell?.theme);
if (cell) dressAsCell(cell);

/**
 * A widget's own interpreter, started now; a cell's session: held by the session's first cell
 * (or by a cell opened on its own), which starts it on the first run; reached by the others.
 */
function sessionFor(cell: CellConfig | undefined): SessionClient {
  if (!cell) {
    const host = new SessionHost(config);
    host.start();
    return host;
  }
  if (!cell.lead && framed) return new RemoteSession(cell.token);
  const host = new SessionHost(config, cell.setup);
  serveSiblings(host, cell.token);
  return host;
}

/** Light or dark: as the page that made the cell says, else as the reader prefers (and when that changes). */
function followTheme(theme: CellConfig["theme"]): void {
  const root = document.documentElement;
  if (theme) {
    root.dataset.theme = theme;
    return;
  }
  const dark = matchMedia("(prefers-color-scheme: dark)");
  const follow = () => (root.dataset.theme = dark.matches ? "dark" : "light");
  follow();
  dark.addEventListener("change", follow);
}

/** The host's font size; a warm start once in view, if the page asked for it. */
function dressAsCell(cell: CellConfig): void {
  const root = document.documentElement;
  if (cell.fontSizePx) root.style.fontSize = `${cell.fontSizePx}px`;
  if (!cell.preloadVisible) return;
  const seen = new IntersectionObserver((entries) => {
    if (!entries.some((entry) => entry.isIntersecting)) return;
    seen.disconnect();
    controller.warm();
  });
  seen.observe(root);
}

// The host sizes the frame to fit: report the document's height whenever it changes. Chromium
// pauses the rendering (and so the ResizeObserver) of a frame of another site that is out of
// sight, as a cell is until its first report, or below the fold: changes of its content are
// reported all the same.
let lastHeight = 0;
const reportHeight = () => {
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height === lastHeight) return;
  lastHeight = height;
  link.post({ kiln: 1, type: "resize", height });
};
new ResizeObserver(reportHeight).observe(document.documentElement);
new MutationObserver(reportHeight).observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Widget
      controller={controller}
      readOnly={options.readonly}
      cell={cell && { hideCode: cell.hideCode, hint: cell.hint, solution: cell.solution, hasCheck: cell.check !== "" }}
    />
  </StrictMode>,
);
