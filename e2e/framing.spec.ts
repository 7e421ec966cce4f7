import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { openChat } from "./support/chat";
import { KILN_ORIGIN } from "./support/host-pages";
import { expect, test } from "./support/test";

/**
 * A page of Kiln's own site (another port of localhost: the same site, so a frame of Kiln in it has the person's
 * own storage; served by a real server, as the browser treats a page it cannot place as a public one) that frames
 * Kiln at each `path` query parameter, in an iframe with the id `frame-<n>`, and notes each frame's load.
 */
const attacker = createServer((req, res) => {
  const paths = new URL(req.url ?? "/", "http://localhost").searchParams.getAll("path");
  const frames = paths
    .map((path, i) => `<iframe id="frame-${i}" src="${KILN_ORIGIN}${path}" onload="loaded++" style="width:600px;height:300px"></iframe>`)
    .join("\n");
  // Each frame's handler is there from the start: a frame refused at once is counted too.
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><title>Win a prize</title><script>window.loaded = 0;</script><button>Click to win</button>${frames}`);
});
let attackerOrigin = "";
test.beforeAll(async () => {
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
});
test.afterAll(() => new Promise<void>((resolve) => attacker.close(() => resolve())));

async function openAttacker(page: Page, paths: string[]): Promise<void> {
  await page.goto(`${attackerOrigin}/?${paths.map((path) => `path=${encodeURIComponent(path)}`).join("&")}`);
  await expect.poll(() => page.evaluate(() => (window as unknown as { loaded: number }).loaded), { timeout: 60_000 }).toBe(paths.length);
}

/** Every way of spelling a path the server answers with the app (its fallback serves index.html for unknown paths). */
const APP_PATHS = ["/", "/index.html", "/embed", "/x/embed", "/foo/embed.html", "/index.html/embed", "/%2e/embed", "/embed.html/", "/?embed.html"];

test("only /embed.html can be framed: a page of the same site gets nothing of the app at any other path", async ({ page }) => {
  // The person has used Kiln: the framed app would run with their conversations and settings.
  await openChat(page, "framing-victim");
  const network = page.getByRole("switch", { name: "Let Python use the network" });
  await expect(network).not.toBeChecked();

  for (const path of APP_PATHS) {
    // The attack's premise: each of these paths is answered with the app itself...
    const response = await page.request.get(`${KILN_ORIGIN}${path}`);
    expect(response.status(), path).toBe(200);
    expect(await response.text(), path).toContain('<div id="root">');
    // ...and the answer forbids every frame.
    expect(response.headers()["content-security-policy"], path).toContain("frame-ancestors 'none'");
  }

  await openAttacker(page, ["/embed.html", ...APP_PATHS]);
  // Framing works from this page: the widget, which may be framed, is there and ready to run.
  const widget = page.frameLocator("#frame-0");
  await expect(widget.getByRole("button", { name: "Run" })).toBeVisible({ timeout: 60_000 });
  for (const [i, path] of APP_PATHS.entries()) {
    // The browser refused the document: the frame holds its error page, not Kiln.
    const frame = page.frameLocator(`#frame-${i + 1}`);
    await expect(frame.locator("#root"), path).toHaveCount(0);
    await expect(frame.getByRole("button", { name: "Settings" }), path).toHaveCount(0);
    await expect(frame.getByRole("switch", { name: "Let Python use the network" }), path).toHaveCount(0);
  }

  // The decoy's click lands on nothing of Kiln's: the conversation's network switch is as it was.
  await page.getByRole("button", { name: "Click to win" }).click();
  await page.goto(`${KILN_ORIGIN}/#/chat`);
  await expect(network).not.toBeChecked();
});

test("the app inside a frame that a host let through shows a notice and starts nothing", async ({ page }) => {
  await openChat(page, "framing-stripped");
  // A host that drops the header: the app's document reaches the frame without its policy.
  const stripped = `${KILN_ORIGIN}/?served-without-policy`;
  await page.route(stripped, async (route) => {
    const response = await route.fetch({ url: `${KILN_ORIGIN}/` });
    const headers = { ...response.headers() };
    delete headers["content-security-policy"];
    await route.fulfill({ response, headers });
  });
  const started: string[] = [];
  page.on("request", (request) => {
    // Python's worker and core, the service worker, and the chunk that starts the app.
    if (request.frame() !== page.mainFrame() && /pyodide|\.wasm|sw\.js|\/assets\/start-/.test(request.url())) started.push(request.url());
  });
  await openAttacker(page, ["/?served-without-policy"]);
  const frame = page.frameLocator("#frame-0");
  // The attack ran: Kiln's own document and script are in the frame (the notice is written by them).
  await expect(frame.getByRole("alert")).toHaveText("Kiln does not run inside another page. Open it in a tab of its own.");
  const framed = page.frames().find((f) => f.url() === stripped);
  expect(await framed?.evaluate(() => document.title)).toBe("Kiln");
  // Nothing of the app is there, and nothing started: no Python, no service worker, no storage opened.
  await expect(frame.getByRole("button", { name: "Settings" })).toHaveCount(0);
  await expect(frame.getByRole("switch", { name: "Let Python use the network" })).toHaveCount(0);
  await page.waitForTimeout(1000);
  expect(started).toEqual([]);
  // (Python's host frame is the first thing a started app adds.)
  expect(await framed?.evaluate(() => document.querySelectorAll("iframe").length)).toBe(0);
});
