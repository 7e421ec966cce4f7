import { existsSync } from "node:fs";
import { chromium, test, type BrowserContext, type LaunchOptions, type Page } from "@playwright/test";

/** Debian's Chromium, headless, with the flags this offline machine needs. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function chromiumLaunchOptions(): LaunchOptions {
  const executablePath =
    process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
  return { executablePath, headless: true, args: CHROMIUM_ARGS };
}

/**
 * A Chromium of the test's own, its profile in `profile` (so its processes and its disk are
 * the test's to inspect), with the service worker blocked as in the shared browser.
 */
export async function launchOwnChromium(profile: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(profile, {
    ...chromiumLaunchOptions(),
    baseURL: test.info().project.use.baseURL,
    serviceWorkers: "block",
  });
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}
