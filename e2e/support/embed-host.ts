import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test as playwrightTest, type Frame, type FrameLocator, type Page } from "@playwright/test";
import { test as base, expect } from "./test";

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
 * `hostOrigin`: a host page server on an origin of its own (another host name and a free
 * port, one per test worker), sent with no isolation headers at all: like a course site or
 * a blog that embeds the widget.
 */
async function serveHostPages(use: (origin: string) => Promise<void>): Promise<void> {
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
  await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await new Promise((resolve) => server.close(resolve));
}

/**
 * With `hostOrigin`, failing on uncaught page errors (support/test.ts), first visits. `otherHostOrigin` is a
 * second host page server (another port, so another origin), for a page that must not hear
 * what the widget tells `hostOrigin`.
 */
export const test = base.extend<object, { hostOrigin: string; otherHostOrigin: string }>({
  // A widget's storage belongs to its host's site (127.0.0.1 here), not the app's: a snapshot
  // stored for the app's own pages would not reach it.
  repeatVisit: false,
  // Playwright reads a fixture's dependencies from its first parameter: here, none.
  // eslint-disable-next-line no-empty-pattern
  hostOrigin: [({}, use) => serveHostPages(use), { scope: "worker" }],
  // eslint-disable-next-line no-empty-pattern
  otherHostOrigin: [({}, use) => serveHostPages(use), { scope: "worker" }],
});

/** With `hostOrigin` only, for suites that drive other engines than Playwright's (e2e/engines). */
// eslint-disable-next-line no-empty-pattern
export const hostTest = playwrightTest.extend<object, { hostOrigin: string }>({ hostOrigin: [({}, use) => serveHostPages(use), { scope: "worker" }] });

export { expect };

/** `?code=…` and friends, for a `frame` parameter. */
export function widgetQuery(params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString();
  return query ? `?${query}` : "";
}

/** Open the host page with one widget per query string. */
export async function openHost(page: Page, hostOrigin: string, frames: string[]): Promise<void> {
  const query = new URLSearchParams(frames.map((frame) => ["frame", frame])).toString();
  await page.goto(`${hostOrigin}/?${query}`);
}

export interface Received {
  frame: number;
  origin: string;
  data: { kiln: number; type: string; id?: unknown; [key: string]: unknown };
}

export function received(page: Page): Promise<Received[]> {
  return page.evaluate(() => (window as unknown as { received: Received[] }).received);
}

/** The messages frame `frame` has sent so far, of one type. */
export async function messagesOf(page: Page, frame: number, type: string, id?: unknown): Promise<Received["data"][]> {
  return (await received(page))
    .filter((m) => m.frame === frame && m.data?.type === type && (id === undefined || m.data.id === id))
    .map((m) => m.data);
}

export async function send(page: Page, frame: number, message: unknown): Promise<void> {
  await page.evaluate(([f, m]) => (window as unknown as { send: (f: number, m: unknown) => void }).send(f as number, m), [
    frame,
    message,
  ] as const);
}

/** `writeFile` with an ArrayBuffer made in the host page (an ArrayBuffer cannot leave the test process). */
export async function sendBytes(page: Page, frame: number, path: string, bytes: number[]): Promise<void> {
  await page.evaluate(
    ([f, p, b]) =>
      (window as unknown as { send: (f: number, m: unknown) => void }).send(f as number, {
        kiln: 1,
        type: "writeFile",
        path: p,
        data: new Uint8Array(b as number[]).buffer,
      }),
    [frame, path, bytes] as const,
  );
}

/** Wait for the frame's `ready`. */
export async function waitForReady(page: Page, frame: number): Promise<Received["data"]> {
  await expect.poll(async () => (await messagesOf(page, frame, "ready")).length, { timeout: 90_000 }).toBeGreaterThan(0);
  return (await messagesOf(page, frame, "ready"))[0];
}

/** Send `run` and wait for its `result`. */
export async function runInWidget(
  page: Page,
  frame: number,
  id: string,
  code: string,
  timeout = 60_000,
): Promise<Received["data"]> {
  await send(page, frame, { kiln: 1, type: "run", id, code });
  return waitForResult(page, frame, id, timeout);
}

/** Wait until frame `frame` has streamed `text` for run `id` (the run is under way). */
export async function waitForStream(page: Page, frame: number, id: string, text: string): Promise<void> {
  await expect
    .poll(async () => (await messagesOf(page, frame, "stream", id)).map((m) => m.text).join(""), { timeout: 60_000 })
    .toContain(text);
}

export async function waitForResult(page: Page, frame: number, id: string, timeout = 60_000): Promise<Received["data"]> {
  await expect.poll(async () => (await messagesOf(page, frame, "result", id)).length, { timeout }).toBe(1);
  return (await messagesOf(page, frame, "result", id))[0];
}

/** Locators inside widget `frame`. */
export function widget(page: Page, frame: number): FrameLocator {
  return page.frameLocator(`#widget-${frame}`);
}

/** Widget `frame`'s document, to evaluate in. */
export async function widgetFrame(page: Page, frame: number): Promise<Frame> {
  const handle = await page.locator(`#widget-${frame}`).elementHandle();
  const content = await handle?.contentFrame();
  if (!content) throw new Error(`No widget frame ${frame}`);
  return content;
}
