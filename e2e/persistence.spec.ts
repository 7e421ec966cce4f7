import { expect, test } from "./support/test";
import { editor, openPlayground, output, run } from "./support/playground";

test("the Playground's code and output survive a reload", async ({ page }) => {
  await openPlayground(page);
  const code = 'print("kept across reloads")\n21 * 2';
  await run(page, code);
  await expect(output(page)).toHaveText("kept across reloads\n42");
  await page.reload();
  await expect(editor(page)).toContainText('print("kept across reloads")');
  await expect(output(page)).toHaveText("kept across reloads\n42");
  await expect(page.getByRole("status")).toContainText(/Python ready · Python 3\.\d+\.\d+ · Pyodide 314\.0\.\d+/, {
    timeout: 90_000,
  });
});
