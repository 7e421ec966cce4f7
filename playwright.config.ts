import { defineConfig } from "@playwright/test";
import { chromiumLaunchOptions } from "./e2e/support/chromium.ts";

const PORT = 4173;
// Lets tests see (and cut off) the service worker's own requests when they go offline.
process.env.PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS = "1";

export default defineConfig({
  testDir: "e2e",
  testMatch: "**/*.spec.ts",
  // Generous: on a 2-core machine, two test workers each start several Pythons at once.
  timeout: 150_000,
  expect: { timeout: 20_000 },
  fullyParallel: true,
  workers: 2,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "test-reports/e2e.json" }]],
  globalSetup: "./e2e/support/global-setup.ts",
  use: {
    baseURL: `http://localhost:${PORT}`,
    browserName: "chromium",
    launchOptions: chromiumLaunchOptions(),
    trace: "retain-on-failure",
    // Installing the service worker copies ~15 MB into each fresh test context: only the
    // tests of offline behaviour allow it (test.use({ serviceWorkers: "allow" })).
    serviceWorkers: "block",
  },
  webServer: {
    command: `npx vite preview --port ${PORT} --strictPort`,
    url: `http://localhost:${PORT}`,
    reuseExistingServer: !process.env.CI,
  },
});
