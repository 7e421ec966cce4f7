#!/usr/bin/env node
// Takes docs/playground.png: the Playground after a run with text, an image and an error.
// Needs a built app (npm run build); serves it with `vite preview` on a spare port.
import { chromium } from "@playwright/test";
import { preview } from "vite";

const PORT = 4190;
const CODE = `import statistics
temps = [12.1, 14.3, 13.8, 17.2, 19.5, 18.9, 21.4]
print(f"mean {statistics.mean(temps):.1f} °C, spread {statistics.stdev(temps):.1f}")

class Bars:
    def __init__(self, values): self.values = values
    def _repr_svg_(self):
        bars = "".join(
            f'<rect x="{i * 42 + 4}" y="{130 - v * 5}" width="34" height="{v * 5}" fill="#c2410c" rx="3"/>'
            for i, v in enumerate(self.values))
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{42 * len(self.values)}" height="130">{bars}</svg>'

display(Bars(temps))
temps["monday"]`;

const server = await preview({ preview: { port: PORT, strictPort: true }, logLevel: "warn" });
try {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  await page.goto(`http://localhost:${PORT}/#/playground`);
  await page.getByRole("status").filter({ hasText: "Python ready" }).waitFor({ timeout: 60_000 });
  await page.getByRole("textbox", { name: "Python code" }).fill(CODE);
  await page.getByRole("button", { name: "Run" }).click();
  await page.getByRole("alert").waitFor();
  await page.getByRole("status").filter({ hasText: "Python ready" }).waitFor();
  await page.screenshot({ path: "docs/playground.png" });
  await browser.close();
  console.log("Wrote docs/playground.png");
} finally {
  await server.close();
}
