/**
 * The one inline script of a Python host frame (see python-host.ts). The frame is an
 * `<iframe sandbox="allow-scripts" srcdoc>`: it inherits the app's Content-Security-Policy,
 * which allows this script by its hash. It waits for the page that made it to send the
 * host's code, then runs it from a `blob:` URL. Nothing here may import anything: the page's
 * header is built from this exact text in Node.
 */
export const HOST_BOOTSTRAP = `addEventListener("message", function start(event) {
  if (event.source !== parent || !event.data || typeof event.data.hostSource !== "string") return;
  removeEventListener("message", start);
  globalThis.kilnHostStart = event.data;
  import(URL.createObjectURL(new Blob([event.data.hostSource], { type: "text/javascript" })));
});`;

/** The frame's document. */
export const HOST_SRCDOC = `<!doctype html><meta charset="utf-8"><title>Python</title><script>${HOST_BOOTSTRAP}</script>`;

/**
 * The Python worker's first script, as a `data:` URL (the only kind an opaque-origin frame may
 * start a worker from under the app's policy). It takes the worker's code in a message and
 * runs it from a `blob:` URL, then says "loaded" (or "refused": WebKit does not let such a
 * worker import from `blob:` URLs, and the frame starts the code as a `data:` URL instead).
 * A `data:` URL of the whole megabyte of code costs Chromium about 200 ms more to start.
 */
const WORKER_BOOTSTRAP = `addEventListener("message", function load(event) {
  removeEventListener("message", load);
  import(URL.createObjectURL(new Blob([event.data], { type: "text/javascript" }))).then(
    function () { postMessage({ kilnBootstrap: "loaded" }); },
    function () { postMessage({ kilnBootstrap: "refused" }); }
  );
});`;

export const WORKER_BOOTSTRAP_URL = `data:text/javascript,${encodeURIComponent(WORKER_BOOTSTRAP)}`;
