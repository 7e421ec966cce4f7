import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startFakeAnthropic } from "../fake-anthropic/server.ts";
import { buildPackageFixtures, servePackages } from "./package-fixtures.ts";

/**
 * Builds the test wheels and lock file, serves them, and starts the stand-in Anthropic API on a free port.
 * Its URL (the Base URL, with the run's secret token) goes to `KILN_FAKE_ANTHROPIC_URL`: Playwright runs this in
 * its main process and the test workers, started afterwards, inherit that environment (see e2e/support/chat.ts).
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const dir = mkdtempSync(path.join(tmpdir(), "kiln-packages-"));
  buildPackageFixtures(dir);
  const server = await servePackages(dir);
  const anthropic = await startFakeAnthropic();
  process.env.KILN_FAKE_ANTHROPIC_URL = anthropic.url;
  return async () => {
    delete process.env.KILN_FAKE_ANTHROPIC_URL;
    await anthropic.close();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };
}
