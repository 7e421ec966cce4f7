/**
 * The app's entry. Inside a frame (only `embed.html` may be framed) Kiln shows a notice and starts
 * nothing: no storage, no Python, no service worker, no channel to other tabs. A page that frames it
 * could otherwise lead a click onto its controls, with the person's own storage behind them. The
 * `frame-ancestors 'none'` header already refuses this; the check holds where a host drops the header.
 *
 * Before anything connects, the page narrows its Content-Security-Policy to the saved Jupyter
 * server's WebSocket (src/host/page-policy.ts): nothing of the app runs until then.
 */
import { narrowPageConnections } from "./host/page-policy";
import { loadSettings } from "./storage/settings";

/** How long the page waits for its saved settings: past that it starts allowing no kernel WebSocket (Settings then says to reload). */
const SETTINGS_WAIT_MS = 10_000;

/** The saved Jupyter server's URL; empty when none is set or the settings cannot be read in time. */
function savedServerUrl(): Promise<string> {
  const late = new Promise<string>((resolve) => setTimeout(() => resolve(""), SETTINGS_WAIT_MS));
  const saved = loadSettings().then(
    (settings) => settings.jupyter.url,
    () => "",
  );
  return Promise.race([saved, late]);
}

if (window.self === window.top) {
  void savedServerUrl().then((serverUrl) => {
    narrowPageConnections(serverUrl, import.meta.env.DEV);
    return import("./start");
  });
} else {
  const notice = document.createElement("p");
  notice.setAttribute("role", "alert");
  notice.textContent = "Kiln does not run inside another page. Open it in a tab of its own.";
  document.getElementById("root")?.replaceChildren(notice);
}
