import { expect, type Page } from "@playwright/test";

/** Fill Settings fields (label → value) through the dialog and save. */
export async function saveSettings(page: Page, fields: Record<string, string>): Promise<void> {
  await page.getByRole("button", { name: "Settings" }).click();
  const dialog = page.getByRole("dialog", { name: "Settings" });
  for (const [label, value] of Object.entries(fields)) await dialog.getByLabel(label).fill(value);
  await dialog.getByRole("button", { name: "Save" }).click();
  await expect(dialog).toBeHidden();
}
