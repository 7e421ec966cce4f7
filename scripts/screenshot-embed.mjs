#!/usr/bin/env node
// Takes docs/embed.png: examples/embed-host.html, served from an origin of its own, with
// three widgets after their runs. Needs a built app (npm run build). `--dark` takes the
// page in dark mode instead (docs/embed-dark.png). `--lesson` takes docs/lesson.png:
// examples/lesson.html (cells made by embed.js), 1280 px wide, after the reader ran its first
// cells and tried the first exercise (its check failed, the hint shown).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { chromium } from "@playwright/test";
import { preview } from "vite";

const KILN_PORT = 4192;
const HOST_PORT = 4193;
const dark = process.argv.includes("--dark");
const lesson = process.argv.includes("--lesson");
const out = lesson ? "docs/lesson.png" : dark ? "docs/embed-dark.png" : "docs/embed.png";

const kiln = await preview({ preview: { port: KILN_PORT, strictPort: true }, logLevel: "warn" });
const host = createServer((_req, res) => {
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
  res.end(readFileSync(lesson ? "examples/lesson.html" : "examples/embed-host.html"));
});
await new Promise((resolve) => host.listen(HOST_PORT, "127.0.0.1", resolve));
try {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const width = lesson ? 1280 : 900;
  const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: dark ? "dark" : "light" });
  await page.goto(`http://127.0.0.1:${HOST_PORT}/?kiln=http://localhost:${KILN_PORT}`);
  const height = await (lesson ? runLesson(page) : runWidgets(page));
  // All of it in the viewport (a full-page capture can miss frames that paint late).
  await page.setViewportSize({ width, height });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: out });
  await browser.close();
  console.log(`Wrote ${out}`);
} finally {
  host.close();
  await kiln.close();
}

/** The three widgets after their runs; the page's whole height. */
async function runWidgets(page) {
  const frames = page.locator("iframe.kiln");
  await frames.nth(0).contentFrame().getByRole("region", { name: "Output" }).filter({ hasText: "mean" }).waitFor({ timeout: 120_000 });
  await frames.nth(1).contentFrame().getByRole("img").waitFor({ timeout: 120_000 });
  await frames.nth(2).contentFrame().getByRole("status").filter({ hasText: "Python ready" }).waitFor({ timeout: 120_000 });
  await page.getByRole("button", { name: /Run “fib”/ }).click();
  await page.locator("#log").filter({ hasText: '"type":"result"' }).waitFor();
  await frames.nth(2).contentFrame().getByRole("status").filter({ hasText: "Python ready" }).waitFor();
  await page.waitForTimeout(300); // the last resize
  return page.evaluate(() => document.documentElement.scrollHeight);
}

/** Cells 1–6 run (the sixth, the first exercise, as given), its hint shown; the height down to that exercise. */
async function runLesson(page) {
  const cell = (n) => page.frameLocator(`iframe[title="Python cell ${n}"]`);
  for (const n of [1, 2, 3, 4, 5, 6]) {
    const before = Number(await cell(n).getByRole("region", { name: "Output" }).getAttribute("data-finished-runs"));
    await cell(n).getByRole("button", { name: "Run" }).click();
    await cell(n).locator(`[aria-label="Output"][data-finished-runs="${before + 1}"]`).waitFor({ timeout: 180_000 });
  }
  await cell(6).getByRole("status", { name: "Check" }).filter({ hasText: "should be" }).waitFor();
  await cell(6).getByRole("button", { name: "Show hint" }).click();
  await page.waitForTimeout(500); // the last resize
  await page.evaluate(() => scrollTo(0, 0));
  return page.locator('iframe[title="Python cell 6"]').evaluate((frame) => Math.ceil(frame.getBoundingClientRect().bottom + 16));
}
