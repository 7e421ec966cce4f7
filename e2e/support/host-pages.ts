import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** Where the widget is served: Playwright's baseURL, whose port playwright.config.ts (loaded first) picks. */
export const KILN_ORIGIN = `http://localhost:${previewPort()}`;

function previewPort(): string {
  const port = process.env.KILN_PREVIEW_PORT;
  if (!port) throw new Error("KILN_PREVIEW_PORT is not set: playwright.config.ts picks the preview server's port; run the tests with that config");
  return port;
}

/**
 * `/?frame=<query>&frame=<query>…` embeds one widget per `frame` parameter, each with that
 * query string. The page records every message its frames send in `window.received`
 * (`{frame, data}`), and `window.send(frame, message)` posts to one frame.
 */
const HOST_PAGE = (frames: string[]) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Host page</title></head>
<body>
<h1>A page that embeds Kiln</h1>
${frames
  .map(
    (query, i) =>
      `<iframe id="widget-${i}" title="Python widget ${i + 1}" src="${KILN_ORIGIN}/embed.html${query}" allow="cross-origin-isolated" style="width:640px;height:200px;border:1px solid #ccc"></iframe>`,
  )
  .join("\n")}
<script>
  const frames = [...document.querySelectorAll("iframe")];
  window.received = [];
  addEventListener("message", (event) => {
    const frame = frames.findIndex((f) => f.contentWindow === event.source);
    window.received.push({ frame, origin: event.origin, data: event.data });
    if (event.data && event.data.kiln === 1 && event.data.type === "resize") frames[frame].style.height = event.data.height + "px";
  });
  window.send = (frame, message, target = "${KILN_ORIGIN}") => frames[frame].contentWindow.postMessage(message, target);
</script>
</body>
</html>`;

/**
 * Serves host pages (see {@link HOST_PAGE}) on a free port of the loopback address, with no
 * isolation headers at all: like a course site or a blog that embeds the widget. `use` gets
 * the server's origin under `hostName`: 127.0.0.1 is another site than the widget's
 * (localhost), whose frames get no storage in Playwright's contexts (private windows);
 * localhost is the widget's own site on another origin, whose frames share the app's storage.
 */
export async function serveHostPages(use: (origin: string) => Promise<void>, hostName: "127.0.0.1" | "localhost"): Promise<void> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(HOST_PAGE(url.searchParams.getAll("frame")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await use(`http://${hostName}:${(server.address() as AddressInfo).port}`);
  await new Promise((resolve) => server.close(resolve));
}
