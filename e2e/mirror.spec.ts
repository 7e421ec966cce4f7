import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, test } from "./support/test";
import { PACKAGE_BASE, servePackages } from "./support/package-fixtures";
import { openPlayground, output, run } from "./support/playground";
import { freePort } from "./support/ports";
import { saveSettings } from "./support/settings";

test("npm run mirror makes a folder that Kiln loads packages from", async ({ page }) => {
  const out = mkdtempSync(path.join(tmpdir(), "kiln-mirror-"));
  let server: Server | undefined;
  try {
    // The test package server stands in for the CDN. Run without blocking this test worker.
    await promisify(execFile)("npm", ["run", "--silent", "mirror", "--", "kilntiny", "--from", PACKAGE_BASE, "--out", out]);
    expect(readdirSync(out).sort()).toEqual(
      expect.arrayContaining(["pyodide-lock.json", expect.stringMatching(/^kilntiny-.*\.whl$/), expect.stringMatching(/^kilntinydep-.*\.whl$/)]),
    );
    // A port chosen now, never one another server may hold.
    const port = await freePort();
    server = await servePackages(out, port);
    const mirror = `http://127.0.0.1:${port}/`;
    await openPlayground(page);
    await saveSettings(page, { "Package download URL": mirror, "Lock file URL": `${mirror}pyodide-lock.json` });
    await page.getByRole("button", { name: "Restart" }).click();
    await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
    const fromMirror = page.waitForRequest((request) => request.url().startsWith(mirror) && request.url().endsWith(".whl"));
    await run(page, "import kilntiny\nkilntiny.GREETING");
    await fromMirror;
    await expect(output(page)).toHaveText("'hello from a tiny wheel'");
  } finally {
    // The browser may still hold a connection open to it, which close() alone would wait for.
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    rmSync(out, { recursive: true, force: true });
  }
});
