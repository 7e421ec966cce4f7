import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { FAKE_ANTHROPIC_PORT, startFakeAnthropic } from "../fake-anthropic/server.ts";
import { buildPackageFixtures, servePackages } from "./package-fixtures.ts";

/** Builds the test wheels and lock file, serves them, and starts the stand-in Anthropic API. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const dir = mkdtempSync(path.join(tmpdir(), "kiln-packages-"));
  buildPackageFixtures(dir);
  const server = await servePackages(dir);
  const anthropic = await startFakeAnthropic(FAKE_ANTHROPIC_PORT);
  return async () => {
    await anthropic.close();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };
}
