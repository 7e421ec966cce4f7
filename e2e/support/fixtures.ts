import type { Page } from "@playwright/test";
import { test as base, expect } from "./test";
import { PACKAGE_BASE, TEST_LOCK_FILE } from "./package-fixtures";
import { openPlayground } from "./playground";
import { saveSettings } from "./settings";
import { seedStoredSnapshot, type StoredSnapshot } from "./snapshot-seed";

/** Point Kiln at the test lock file and package server through Settings, then restart. */
export async function useTestPackages(page: Page, packageBase = PACKAGE_BASE): Promise<void> {
  await saveSettings(page, { "Lock file URL": TEST_LOCK_FILE, "Package download URL": packageBase });
  await page.getByRole("button", { name: "Restart" }).click();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

async function sharedPlayground(
  browser: import("@playwright/test").Browser,
  snapshot: Promise<StoredSnapshot>,
  use: (page: Page) => Promise<void>,
  prepare?: (page: Page) => Promise<void>,
): Promise<void> {
  const context = await browser.newContext();
  await seedStoredSnapshot(context, await snapshot);
  const page = await context.newPage();
  await openPlayground(page);
  await prepare?.(page);
  await use(page);
  await context.close();
}

/**
 * `playground`: one Playground page per test worker, shared by the tests that need only
 * a working interpreter (starting Python costs seconds on a small machine). Tests that
 * need a fresh interpreter or storage use Playwright's own `page`. Both start as a repeat
 * visit (see `repeatVisit` in ./test).
 */
export const test = base.extend<object, { playground: Page; packagePlayground: Page }>({
  playground: [async ({ browser, storedSnapshot }, use) => sharedPlayground(browser, storedSnapshot(), use), { scope: "worker" }],
  /** A shared Playground using the test lock file and package server. */
  packagePlayground: [
    async ({ browser, storedSnapshot }, use) => sharedPlayground(browser, storedSnapshot(), use, (page) => useTestPackages(page)),
    { scope: "worker" },
  ],
});

export { expect };
