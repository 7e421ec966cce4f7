#!/usr/bin/env node
// Takes docs/embed.png: examples/embed-host.html, served from an origin of its own, with
// three widgets after their runs. Needs a built app (npm run build). `--dark` takes the
// page in dark mode instead (docs/embed-dark.png).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { chromium } from "@playwright/test";
import { preview } from "vite";

const KILN_PORT = 4192;
const HOST_PORT = 4193;
const dark = process.argv.includes("--dark");
const out = dark ? "docs/embed-dark.png" : "docs/embed.png";

const kiln = await preview({ preview: { port: KILN_PORT, strictPort: true }, logLevel: "warn" });
const host = createServer((_req, res) => {
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
  res.end(readFileSync("examples/embed-host.html"));
});
await new Promise((resolve) => host.listen(HOST_PORT, "127.0.0.1", resolve));
try {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 900, height: 900 }, colorScheme: dark ? "dark" : "light" });
  await page.goto(`http://127.0.0.1:${HOST_PORT}/?kiln=http://localhost:${KILN_PORT}`);
  const frames = page.locator("iframe.kiln");
  await frames.nth(0).contentFrame().getByRole("region", { name: "Output" }).filter({ hasText: "mean" }).waitFor({ timeout: 120_000 });
  await frames.nth(1).contentFrame().getByRole("img").waitFor({ timeout: 120_000 });
  await frames.nth(2).contentFrame().getByRole("status").filter({ hasText: "Python ready" }).waitFor({ timeout: 120_000 });
  await page.getByRole("button", { name: /Run “fib”/ }).click();
  await page.locator("#log").filter({ hasText: '"type":"result"' }).waitFor();
  await frames.nth(2).contentFrame().getByRole("status").filter({ hasText: "Python ready" }).waitFor();
  await page.waitForTimeout(300); // the last resize
  // The whole page in the viewport (a full-page capture can miss frames that paint late).
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: 900, height });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: out });
  await browser.close();
  console.log(`Wrote ${out}`);
} finally {
  host.close();
  await kiln.close();
}
