import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildPackageFixtures, servePackages } from "./package-fixtures.ts";

/** Builds the test wheels and lock file, and serves them for the whole run. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const dir = mkdtempSync(path.join(tmpdir(), "kiln-packages-"));
  buildPackageFixtures(dir);
  const server = await servePackages(dir);
  return async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };
}
