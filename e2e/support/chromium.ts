import { existsSync } from "node:fs";
import type { LaunchOptions } from "@playwright/test";

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
