import { test as base, expect, type Browser, type Page } from "@playwright/test";
import { serveHostPages } from "./host-pages";
import { PACKAGE_BASE, TEST_LOCK_FILE } from "./package-fixtures";
import { openPlayground } from "./playground";
import { saveSettings } from "./settings";
import { seedStoredSnapshot, snapshotServer, takeStoredSnapshot, type StoredSnapshot } from "./snapshot-seed";

interface TestFixtures {
  failOnPageErrors: void;
  /**
   * Whether `page` starts as a repeat visit, with Python's start-up snapshot already stored
   * (true), or as a first visit, which boots Pyodide and makes the snapshot (false). Repeat
   * visits are what people mostly see, and each saves a normal boot (seconds here).
   */
  repeatVisit: boolean;
}

/**
 * Every worker fixture of the suite is declared here, in one `test`: Playwright runs tests
 * whose worker fixtures differ in different worker processes, and each new worker would
 * start its browser and take its snapshot again.
 */
interface WorkerFixtures {
  /** The snapshot a first visit stores, taken once per test worker when a test first needs it. */
  storedSnapshot: () => Promise<StoredSnapshot>;
  /**
   * One Playground page per test worker, shared by the tests that need only a working
   * interpreter (starting Python costs seconds on a small machine). Tests that need a fresh
   * interpreter or storage use Playwright's own `page`. It starts as a repeat visit.
   */
  playground: Page;
  /** A shared Playground using the test lock file and package server. */
  packagePlayground: Page;
  /**
   * A host page server on another site than the widget's (see e2e/support/host-pages.ts):
   * its widgets get no storage, so they boot Pyodide normally.
   */
  hostOrigin: string;
  /** A host page server on the widget's own site but another origin: its widgets share the app's storage. */
  sameSiteHostOrigin: string;
}

/** Point Kiln at the test lock file and package server through Settings, then restart. */
export async function useTestPackages(page: Page, packageBase = PACKAGE_BASE): Promise<void> {
  await saveSettings(page, { "Lock file URL": TEST_LOCK_FILE, "Package download URL": packageBase });
  await page.getByRole("button", { name: "Restart" }).click();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

async function sharedPlayground(
  browser: Browser,
  snapshot: Promise<StoredSnapshot>,
  use: (page: Page) => Promise<void>,
  prepare?: (page: Page) => Promise<void>,
): Promise<void> {
  const context = await browser.newContext();
  try {
    await seedStoredSnapshot(context, await snapshot);
    const page = await context.newPage();
    await openPlayground(page);
    await prepare?.(page);
    await use(page);
  } finally {
    await context.close();
  }
}

/**
 * Playwright's `test`, failing any test whose own browser context reports an uncaught error
 * in a page (an exception or an unhandled rejection), whether or not the test looked; its
 * `page` starts as a repeat visit unless the test says `test.use({ repeatVisit: false })`.
 */
export const test = base.extend<TestFixtures, WorkerFixtures>({
  failOnPageErrors: [
    async ({ context }, use) => {
      const errors: string[] = [];
      context.on("weberror", (error) => errors.push(error.error().message));
      await use();
      expect(errors, "uncaught errors in the page").toEqual([]);
    },
    { auto: true },
  ],
  repeatVisit: [true, { option: true }],
  storedSnapshot: [
    async ({ browser }, use) => {
      const server = await snapshotServer();
      let taken: Promise<StoredSnapshot> | undefined;
      await use(() => (taken ??= takeStoredSnapshot(browser, server)));
      await server.close();
    },
    { scope: "worker" },
  ],
  page: async ({ page, repeatVisit, storedSnapshot }, use) => {
    if (repeatVisit) await seedStoredSnapshot(page.context(), await storedSnapshot());
    await use(page);
  },
  playground: [async ({ browser, storedSnapshot }, use) => sharedPlayground(browser, storedSnapshot(), use), { scope: "worker" }],
  packagePlayground: [
    async ({ browser, storedSnapshot }, use) => sharedPlayground(browser, storedSnapshot(), use, (page) => useTestPackages(page)),
    { scope: "worker" },
  ],
  // Playwright reads a fixture's dependencies from its first parameter: here, none.
  // eslint-disable-next-line no-empty-pattern
  hostOrigin: [({}, use) => serveHostPages(use, "127.0.0.1"), { scope: "worker" }],
  // eslint-disable-next-line no-empty-pattern
  sameSiteHostOrigin: [({}, use) => serveHostPages(use, "localhost"), { scope: "worker" }],
});

export { expect };
