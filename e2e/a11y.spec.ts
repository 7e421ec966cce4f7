import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, test as base } from "./support/test";
import { answered, openChat, script, sendMessage, uniqueKey } from "./support/chat";
import { serveCellPages, type CellPages } from "./support/cell-pages";
import { openPlayground, output, run } from "./support/playground";
import { PHONE } from "./support/phone";

// Playwright reads a fixture's dependencies from its first parameter: here, none.
// eslint-disable-next-line no-empty-pattern
const test = base.extend<object, { cellPages: CellPages }>({ cellPages: [({}, use) => serveCellPages(use), { scope: "worker" }] });

/** axe's serious and critical findings on the page and its frames, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(" ")} — ${node.failureSummary ?? ""}`));
}

for (const [width, use] of [
  ["wide", {}],
  ["a phone", PHONE],
] as const) {
  test.describe(`on ${width}`, () => {
    test.use(use);

    test("chat with a turn, and Settings open, have no serious accessibility violation", async ({ page }) => {
      const key = uniqueKey("a11y-chat");
      await script(key, [
        { content: [{ type: "text", text: "Counting." }, { type: "tool_use", name: "python", input: { code: "print(sum(range(10)))" } }] },
        { content: [{ type: "text", text: "The sum is **45**." }] },
      ]);
      await openChat(page, key);
      await sendMessage(page, "Add up 0 to 9");
      await answered(page, "The sum is 45.");
      await expect(page.getByRole("region", { name: "Python cell" })).toContainText("45");
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByRole("button", { name: "Settings" }).click();
      await expect(page.getByRole("dialog", { name: "Settings" })).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
    });

    test("a Playground notebook with outputs has no serious accessibility violation", async ({ page }) => {
      await openPlayground(page);
      await run(page, "print('hello')\nfrom IPython.display import HTML\ndisplay(HTML('<b>bold</b>'))\n1/0");
      await expect(output(page)).toContainText("ZeroDivisionError");
      expect(await seriousViolations(page)).toEqual([]);
    });

    test("a page of cells made by embed.js has no serious accessibility violation", async ({ page, cellPages }) => {
      const path = cellPages.add(`<h1>A lesson</h1>\n<pre class="kiln">print("hello")</pre>\n<pre class="kiln" data-kiln-theme="dark">40 + 2</pre>`);
      await page.goto(cellPages.sameSite + path);
      for (const n of [1, 2]) {
        const frame = page.frameLocator(`iframe[title="Python cell ${n}"]`);
        const out = frame.getByRole("region", { name: "Output" });
        const before = Number(await out.getAttribute("data-finished-runs", { timeout: 60_000 }));
        await frame.getByRole("button", { name: "Run", exact: true }).click();
        await expect(out).toHaveAttribute("data-finished-runs", String(before + 1), { timeout: 90_000 });
      }
      await expect(page.frameLocator('iframe[title="Python cell 2"]').getByRole("region", { name: "Output" })).toContainText("42");
      expect(await seriousViolations(page)).toEqual([]);
    });
  });
}
