import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, type FrameLocator, type Page } from "@playwright/test";
import { KILN_ORIGIN } from "./host-pages";

/** Host pages for `embed.js`, by path, on a server of the test's own (no isolation headers, like a course site). */
export interface CellPages {
  /** `http://127.0.0.1:<port>`: another site than Kiln's (its frames get no storage, and boot Python). */
  otherSite: string;
  /** `http://localhost:<port>`: Kiln's own site on another origin (its frames start Python from the stored snapshot). */
  sameSite: string;
  /** Serve `body` (with `embed.js`, or `script` in its place) at a new path; returns the path. */
  add(body: string, script?: string): string;
}

/** The script tag a page of cells has, and a record of the messages its frames send (`window.received`). */
const page = (body: string, script: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>A lesson</title>
<style>body { font: 18px/1.5 Georgia, serif; max-width: 44rem; margin: 1rem auto; }</style></head>
<body>
${body}
<script>
  window.received = [];
  addEventListener("message", (event) => {
    const frame = [...document.querySelectorAll("iframe")].findIndex((f) => f.contentWindow === event.source);
    window.received.push({ frame, origin: event.origin, data: event.data });
  });
</script>
<script type="module" src="${script}"></script>
</body>
</html>`;

export async function serveCellPages(use: (pages: CellPages) => Promise<void>): Promise<void> {
  const pages = new Map<string, string>();
  const server = createServer((req, res) => {
    const html = pages.get(new URL(req.url ?? "/", "http://127.0.0.1").pathname);
    if (html === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await use({
    otherSite: `http://127.0.0.1:${port}`,
    sameSite: `http://localhost:${port}`,
    add: (body, script = `${KILN_ORIGIN}/embed.js`) => {
      const path = `/page-${pages.size + 1}.html`;
      pages.set(path, page(body, script));
      return path;
    },
  });
  await new Promise((resolve) => server.close(resolve));
}

/** Cell `n` (1-based, in the order `embed.js` made them) of a host page. */
export const cellFrame = (page: Page, n: number): FrameLocator => page.frameLocator(`iframe[title="Python cell ${n}"]`);
export const cellOutput = (page: Page, n: number) => cellFrame(page, n).getByRole("region", { name: "Output" });

/**
 * Press the button `name` of cell `n` from the keyboard (focused, then Enter). On a busy machine
 * a mouse click on a cell was now and then lost: the cell's Run was never called, its button
 * enabled and in view, and the same button clicked from a script a moment later ran. A cell is
 * a frame of another process, to which Chromium routes a click by where the compositor last drew
 * it, most likely stale just after Playwright scrolled the host page. Keys go to the focused frame.
 */
export async function pressInCell(page: Page, n: number, name: string): Promise<void> {
  await cellFrame(page, n).getByRole("button", { name }).press("Enter");
}

/** Press Run in cell `n` and wait for that run to end. */
export async function runCellFrame(page: Page, n: number, timeout = 90_000): Promise<void> {
  const before = Number(await cellOutput(page, n).getAttribute("data-finished-runs"));
  await pressInCell(page, n, "Run");
  await expect(cellOutput(page, n)).toHaveAttribute("data-finished-runs", String(before + 1), { timeout });
}
