import { test as base, expect } from "@playwright/test";
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

interface WorkerFixtures {
  /** The snapshot a first visit stores, taken once per test worker when a test first needs it. */
  storedSnapshot: () => Promise<StoredSnapshot>;
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
});

export { expect };
