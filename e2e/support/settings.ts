import { expect, type Page } from "@playwright/test";

/**
 * Fill Settings fields (label → value) through the dialog and save. A provider's field is named
 * with its group: `"Anthropic › API key"`.
 */
export async function saveSettings(page: Page, fields: Record<string, string>): Promise<void> {
  await page.getByRole("button", { name: "Settings" }).click();
  const dialog = page.getByRole("dialog", { name: "Settings" });
  for (const [label, value] of Object.entries(fields)) {
    const [group, name] = label.includes(" › ") ? label.split(" › ") : [undefined, label];
    const field = (group ? dialog.getByRole("group", { name: group, exact: true }) : dialog).getByLabel(name);
    if ((await field.evaluate((element) => element.tagName)) === "SELECT") await field.selectOption(value);
    else await field.fill(value);
  }
  await dialog.getByRole("button", { name: "Save" }).click();
  await expect(dialog).toBeHidden();
}

/** The settings record as stored in the app's IndexedDB, as JSON text. */
export function storedSettings(page: Page): Promise<string> {
  return page.evaluate(
    () =>
      new Promise<string>((resolve) => {
        const open = indexedDB.open("kiln");
        open.onsuccess = () => {
          const get = open.result.transaction("settings").objectStore("settings").get("app");
          get.onsuccess = () => resolve(JSON.stringify(get.result));
        };
      }),
  );
}
