#!/usr/bin/env node
// Takes docs/chat.png: a conversation in which Claude's Python ran in the tab, with a file
// uploaded beside it; docs/phone-chat.png, the same on a phone (390 × 844, touch), and
// docs/phone-settings.png, Settings there. Needs a built app (npm run build). Claude is the stand-in Anthropic API
// of the browser tests (e2e/fake-anthropic), loaded through Vite, which compiles its TypeScript.
import { chromium } from "@playwright/test";
import { createServer, preview } from "vite";

const PORT = 4191;
const KEY = "sk-ant-screenshot";
const CSV = "day,temp\nMon,12.1\nTue,14.3\nWed,13.8\nThu,17.2\nFri,19.5\n";
const CODE = `import csv, statistics
rows = list(csv.DictReader(open("temps.csv")))
temps = [float(row["temp"]) for row in rows]
print(f"{len(temps)} days, mean {statistics.mean(temps):.2f} °C")
max(rows, key=lambda row: float(row["temp"]))`;

const loader = await createServer({ server: { middlewareMode: true }, appType: "custom", logLevel: "warn" });
const { startFakeAnthropic } = await loader.ssrLoadModule("/e2e/fake-anthropic/server.ts");
const claude = await startFakeAnthropic();
const kiln = await preview({ preview: { port: PORT, strictPort: true }, logLevel: "warn" });
try {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  /** The conversation, in a browser context of its own, with its own key; returns its page. */
  const converse = async (options, key) => {
    const replies = [
      { content: [{ type: "text", text: "I'll read the file and compute the mean." }, { type: "tool_use", name: "python", input: { code: CODE } }] },
      { content: [{ type: "text", text: "Over the five days the mean is **15.38 °C**; the warmest day was Friday, at 19.5 °C." }] },
    ];
    const scripted = await fetch(`${claude.url}/__kiln/script`, { method: "POST", body: JSON.stringify({ key, replies }) });
    if (!scripted.ok) throw new Error(`The stand-in API refused the script (${scripted.status}).`);
    const page = await (await browser.newContext(options)).newPage();
    await page.goto(`http://localhost:${PORT}/#/chat`);
    await page.getByRole("button", { name: "Settings" }).click();
    const settings = page.getByRole("dialog", { name: "Settings" });
    const anthropic = settings.getByRole("group", { name: "Anthropic", exact: true });
    await anthropic.getByRole("button", { name: /^Anthropic · / }).click();
    await anthropic.getByLabel("API key").fill(key);
    await anthropic.getByLabel("Base URL").fill(claude.url);
    await settings.getByRole("button", { name: "Save" }).click();
    await settings.waitFor({ state: "hidden" });

    await page.locator("input[type=file]").first().setInputFiles({ name: "temps.csv", mimeType: "text/csv", buffer: Buffer.from(CSV) });
    await page.getByText("temps.csv").first().waitFor({ state: "attached" });
    await page.getByRole("textbox", { name: "Message" }).fill("What was the mean temperature in temps.csv, and the warmest day?");
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByRole("log", { name: "Messages" }).getByText("the warmest day was Friday").waitFor({ timeout: 120_000 });
    await page.getByRole("button", { name: "Send" }).waitFor();
    return page;
  };
  await (await converse({ viewport: { width: 1280, height: 760 } }, KEY)).screenshot({ path: "docs/chat.png" });
  const phone = await converse({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }, `${KEY}-phone`);
  await phone.screenshot({ path: "docs/phone-chat.png" });
  await phone.getByRole("button", { name: "Settings" }).click();
  await phone.getByRole("dialog", { name: "Settings" }).getByRole("button", { name: /^OpenAI · / }).click();
  await phone.screenshot({ path: "docs/phone-settings.png" });
  await browser.close();
  console.log("Wrote docs/chat.png, docs/phone-chat.png and docs/phone-settings.png");
} finally {
  await kiln.close();
  await claude.close();
  await loader.close();
}
