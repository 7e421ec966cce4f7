#!/usr/bin/env node
// Takes docs/notebook.png: a Playground notebook after Run all, with text, Markdown, LaTeX, an
// SVG figure and a table; and docs/phone-playground.png, the same notebook on a phone (390 × 844, touch).
// Needs a built app (npm run build); serves it with `vite preview` on a spare port.
import { chromium } from "@playwright/test";
import { preview } from "vite";

const PORT = 4190;
const CELLS = [
  ["code", `import statistics
temps = [12.1, 14.3, 13.8, 17.2, 19.5, 18.9, 21.4]
print(f"mean {statistics.mean(temps):.1f} °C, spread {statistics.stdev(temps):.1f}")`],
  ["markdown", `## A week of temperatures
The mean is $\\bar{x} = \\frac{1}{n}\\sum x_i$; the bars below are each day.`],
  ["code", `from IPython.display import display, Latex, HTML
display(Latex(r"$\\sigma = \\sqrt{\\frac{1}{n-1}\\sum (x_i - \\bar{x})^2}$"))

class Bars:
    def __init__(self, values): self.values = values
    def _repr_svg_(self):
        bars = "".join(
            f'<rect x="{i * 42 + 4}" y="{130 - v * 5}" width="34" height="{v * 5}" fill="#c2410c" rx="3"/>'
            for i, v in enumerate(self.values))
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{42 * len(self.values)}" height="130">{bars}</svg>'

Bars(temps)`],
  ["code", `%timeit sorted(temps)
max(temps)`],
];

const server = await preview({ preview: { port: PORT, strictPort: true }, logLevel: "warn" });
try {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  /** Make the notebook in a page of its own browser context, run it, and take its picture. */
  const take = async (options, path) => {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    await page.goto(`http://localhost:${PORT}/#/playground`);
    await page.getByRole("status").filter({ hasText: "Python ready" }).waitFor({ timeout: 60_000 });
    // On a phone the notebooks are a drawer: New notebook is in it.
    const drawer = page.getByRole("button", { name: "Notebooks" });
    if (await drawer.isVisible()) await drawer.click();
    await page.getByRole("button", { name: "New notebook" }).click();
    await page.getByRole("textbox", { name: "Notebook title" }).fill("Temperatures");
    for (const [index, [kind, source]] of CELLS.entries()) {
      if (index > 0) await page.getByRole("button", { name: kind === "code" ? "Add code cell" : "Add Markdown cell" }).click();
      const cell = page.getByRole("region", { name: `Cell ${index + 1}`, exact: true });
      const box = cell.getByRole("textbox", { name: kind === "code" ? "Python code" : "Markdown" });
      await box.click();
      await box.fill(source);
    }
    await page.getByRole("status").filter({ hasText: "Python ready" }).waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Run all" }).click();
    await page.getByRole("region", { name: "Cell 4", exact: true }).getByText("21.4").waitFor({ timeout: 60_000 });
    await page.getByRole("status").filter({ hasText: "Python ready" }).waitFor();
    await page.evaluate(() => scrollTo(0, 0));
    await page.waitForTimeout(500);
    await page.screenshot({ path });
    await context.close();
  };
  await take({ viewport: { width: 1280, height: 900 } }, "docs/notebook.png");
  await take({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }, "docs/phone-playground.png");
  await browser.close();
  console.log("Wrote docs/notebook.png and docs/phone-playground.png");
} finally {
  await server.close();
}
