import type { Page } from "@playwright/test";

/** The main thread's tasks longer than 50 ms, as each document of the page has seen them from its start. */
export async function watchLongTasks(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen: number[] = [];
    (window as unknown as { kilnLongTasks: number[] }).kilnLongTasks = seen;
    new PerformanceObserver((list) => seen.push(...list.getEntries().map((entry) => entry.duration))).observe({ type: "longtask", buffered: true });
  });
}

/** The longest main-thread task of the current document so far, in ms (0 when none took over 50 ms). */
export function longestTask(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(0, ...(window as unknown as { kilnLongTasks: number[] }).kilnLongTasks));
}
