import { defineConfig } from "@playwright/test";
import { chromiumLaunchOptions } from "./e2e/support/chromium.ts";
import { freePort } from "./e2e/support/ports.ts";
import type { EngineName } from "./e2e/engines/driver.ts";

// The preview server's port: a free one, never a fixed port that some other server may hold. This file runs in
// the runner and again in every test worker, which inherit the runner's environment: the first load picks it.
process.env.KILN_PREVIEW_PORT ??= String(await freePort());
const PORT = Number(process.env.KILN_PREVIEW_PORT);
// The test package server's port (e2e/support/package-fixtures.ts), picked the same way.
process.env.KILN_PACKAGE_PORT ??= String(await freePort());
if (!Number.isInteger(PORT) || PORT < 1 || PORT > 65535) throw new Error(`KILN_PREVIEW_PORT is not a port: ${process.env.KILN_PREVIEW_PORT}`);
// Lets tests see (and cut off) the service worker's own requests when they go offline.
process.env.PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS = "1";

/** The specs that assert how long the page's main thread is held (see the "measured" project). */
const MEASURED = ["**/output-limits.spec.ts", "**/many-variables.spec.ts", "**/markdown-limits.spec.ts", "**/stream-flood.spec.ts", "**/error-limits.spec.ts", "**/big-notebook.spec.ts"];

export default defineConfig<object, { engineName: EngineName }>({
  testDir: "e2e",
  testMatch: "**/*.spec.ts",
  // Generous: on a 2-core machine, two test workers each start several Pythons at once.
  timeout: 150_000,
  expect: { timeout: 20_000 },
  fullyParallel: true,
  // A test.only left in would silently skip every other test.
  forbidOnly: true,
  workers: 2,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "test-reports/e2e.json" }]],
  globalSetup: "./e2e/support/global-setup.ts",
  use: {
    baseURL: `http://localhost:${PORT}`,
    browserName: "chromium",
    launchOptions: chromiumLaunchOptions(),
    // Recording a trace of every test costs a fifth of the suite's time here: record one when
    // looking into a failure (npx playwright test --trace retain-on-failure …).
    trace: "off",
    // Installing the service worker copies ~15 MB into each fresh test context: only the
    // tests of offline behaviour allow it (test.use({ serviceWorkers: "allow" })).
    serviceWorkers: "block",
  },
  projects: [
    // Everything but the cross-engine bodies, whose every behaviour the Chromium specs cover, and the measured ones.
    { name: "chromium", testIgnore: ["engines/**", ...MEASURED] },
    // The cross-engine bodies (e2e/engines) run in Firefox ESR and WebKitGTK, through their own drivers.
    { name: "firefox", testMatch: "engines/**/*.spec.ts", use: { engineName: "firefox" } },
    { name: "webkit", testMatch: "engines/**/*.spec.ts", use: { engineName: "webkit" } },
    // Tests that measure the page's longest main-thread task: after every other test, one at a time, so that no
    // other test's browser shares the two cores with the page being measured.
    { name: "measured", testMatch: MEASURED, dependencies: ["chromium", "firefox", "webkit"], workers: 1 },
  ],
  webServer: {
    command: `npx vite preview --port ${PORT} --strictPort`,
    url: `http://localhost:${PORT}`,
    // Never a server that happens to listen there already: the tests must talk to this build.
    reuseExistingServer: false,
  },
});
