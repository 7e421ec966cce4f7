import { expect } from "@playwright/test";
import type { RecordedRequest, Reply, SessionConfig } from "../fake-gemini/server";

/**
 * The stand-in Gemini API's URL, `http://127.0.0.1:<port>/<token>` (the route prefix is the run's secret token):
 * e2e/support/global-setup.ts starts the server and sets `KILN_FAKE_GEMINI_URL`. Read on each call, so that
 * loading this module never depends on the global setup having run (listing tests does not run it).
 */
function serverUrl(): string {
  const url = process.env.KILN_FAKE_GEMINI_URL;
  if (!url) {
    throw new Error(
      "KILN_FAKE_GEMINI_URL is not set: the stand-in Gemini API is started by e2e/support/global-setup.ts, " +
        "which `playwright test` runs before the tests (with playwright.config.ts as its config)",
    );
  }
  return url;
}

/**
 * The base URL of a session's "API" (`${KILN_FAKE_GEMINI_URL}/<session>`), as `@google/genai` takes it in
 * `httpOptions.baseUrl`: the SDK adds `/<apiVersion>/models/<model>:streamGenerateContent?alt=sse` itself.
 */
export function geminiBase(session: string): string {
  return `${serverUrl()}/${session}`;
}

async function control(route: string, body: unknown): Promise<void> {
  const response = await fetch(`${serverUrl()}/__kiln/${route}`, { method: "POST", body: JSON.stringify(body) });
  expect(response.ok, `${route}: ${response.status} ${await response.clone().text()}`).toBe(true);
}

/** Queue the session's next replies: each generateContent / streamGenerateContent request takes one. */
export async function scriptGemini(session: string, replies: Reply[]): Promise<void> {
  await control("script", { session, replies });
}

/** Every generateContent / streamGenerateContent request the session received (refused ones included), in order. */
export async function geminiRequests(session: string): Promise<RecordedRequest[]> {
  return (await fetch(`${serverUrl()}/__kiln/requests?session=${encodeURIComponent(session)}`)).json();
}

/** Change how the session's API behaves: CORS headers, the models it lists. */
export async function configureGemini(session: string, config: SessionConfig): Promise<void> {
  await control("configure", { session, ...config });
}

/** A session of its own per test, so tests running side by side never share replies, settings or signatures. */
export function uniqueGeminiSession(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_-]/g, "-")}-${Math.random().toString(36).slice(2, 8)}`;
}
