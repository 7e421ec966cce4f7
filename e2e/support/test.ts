import { test as base, expect } from "@playwright/test";

/**
 * Playwright's `test`, failing any test whose own browser context reports an uncaught error
 * in a page (an exception or an unhandled rejection), whether or not the test looked.
 */
export const test = base.extend<{ failOnPageErrors: void }>({
  failOnPageErrors: [
    async ({ context }, use) => {
      const errors: string[] = [];
      context.on("weberror", (error) => errors.push(error.error().message));
      await use();
      expect(errors, "uncaught errors in the page").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };
