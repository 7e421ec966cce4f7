import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startFakeAnthropic } from "../fake-anthropic/server.ts";
import { startFakeGemini } from "../fake-gemini/server.ts";
import { startFakeOpenAI } from "../fake-openai/server.ts";
import { buildPackageFixtures, servePackages } from "./package-fixtures.ts";

/**
 * Builds the test wheels and lock file, serves them, and starts the stand-in Anthropic API and the stand-in
 * OpenAI-compatible server on free ports. Their URLs (with the run's secret tokens) go to `KILN_FAKE_ANTHROPIC_URL`
 * (the Base URL) and `KILN_FAKE_OPENAI_URL` (a test's Base URL adds `/<session>/v1`): Playwright runs this in its
 * main process and the test workers, started afterwards, inherit that environment (see e2e/support/chat.ts and
 * e2e/support/openai.ts). The stand-in Gemini API's goes to `KILN_FAKE_GEMINI_URL` (see e2e/support/gemini.ts).
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const dir = mkdtempSync(path.join(tmpdir(), "kiln-packages-"));
  buildPackageFixtures(dir);
  const server = await servePackages(dir);
  const anthropic = await startFakeAnthropic();
  process.env.KILN_FAKE_ANTHROPIC_URL = anthropic.url;
  const openai = await startFakeOpenAI();
  process.env.KILN_FAKE_OPENAI_URL = openai.url;
  const gemini = await startFakeGemini();
  process.env.KILN_FAKE_GEMINI_URL = gemini.url;
  return async () => {
    delete process.env.KILN_FAKE_ANTHROPIC_URL;
    delete process.env.KILN_FAKE_OPENAI_URL;
    delete process.env.KILN_FAKE_GEMINI_URL;
    await anthropic.close();
    await openai.close();
    await gemini.close();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };
}
