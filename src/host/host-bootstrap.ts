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
