import { expect, type Locator, type Page } from "@playwright/test";

/**
 * Open a folded group of the Settings dialog (a provider's), as a person does: its line is a
 * button that shows the fields. Returns the group.
 */
export async function openGroup(dialog: Locator, name: string): Promise<Locator> {
  const group = dialog.getByRole("group", { name, exact: true });
  const toggle = group.getByRole("button", { name: new RegExp(`^${name} · `) });
  if ((await toggle.getAttribute("aria-expanded")) === "false") await toggle.click();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  return group;
}

/**
 * Fill Settings fields (label → value) through the dialog and save. A provider's field is named
 * with its group, which is opened first: `"Anthropic › API key"`.
 */
export async function saveSettings(page: Page, fields: Record<string, string>): Promise<void> {
  await page.getByRole("button", { name: "Settings" }).click();
  const dialog = page.getByRole("dialog", { name: "Settings" });
  for (const [label, value] of Object.entries(fields)) {
    const [group, name] = label.includes(" › ") ? label.split(" › ") : [undefined, label];
    const field = (group ? await openGroup(dialog, group) : dialog).getByLabel(name);
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
