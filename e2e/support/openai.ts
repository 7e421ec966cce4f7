import { expect } from "@playwright/test";
import type { ContainerSnapshot, RecordedRequest, Reply, ResponsesReply, SessionConfig } from "../fake-openai/server";

/**
 * The stand-in OpenAI-compatible server's URL, `http://127.0.0.1:<port>/<token>` (the route prefix is the run's
 * secret token): e2e/support/global-setup.ts starts the server and sets `KILN_FAKE_OPENAI_URL`. Read on each call,
 * so that loading this module never depends on the global setup having run (listing tests does not run it).
 */
function serverUrl(): string {
  const url = process.env.KILN_FAKE_OPENAI_URL;
  if (!url) {
    throw new Error(
      "KILN_FAKE_OPENAI_URL is not set: the stand-in OpenAI-compatible server is started by e2e/support/global-setup.ts, " +
        "which `playwright test` runs before the tests (with playwright.config.ts as its config)",
    );
  }
  return url;
}

/** The Base URL of a session's "server" (`${KILN_FAKE_OPENAI_URL}/<session>/v1`), as the app's setting takes it. */
export function openaiBase(session: string): string {
  return `${serverUrl()}/${session}/v1`;
}

async function control(route: string, body: unknown): Promise<void> {
  const response = await fetch(`${serverUrl()}/__kiln/${route}`, { method: "POST", body: JSON.stringify(body) });
  expect(response.ok, `${route}: ${response.status} ${await response.clone().text()}`).toBe(true);
}

/** Queue the session's next Chat Completions replies: each chat completions request takes one. */
export async function scriptOpenAI(session: string, replies: Reply[]): Promise<void> {
  await control("script", { session, replies });
}

/** Every chat completions request the session received (refused ones included), in order. */
export async function openaiRequests(session: string): Promise<RecordedRequest[]> {
  return (await fetch(`${serverUrl()}/__kiln/requests?session=${encodeURIComponent(session)}`)).json();
}

/** Queue the session's next Responses API replies: each `POST /v1/responses` request takes one. */
export async function scriptResponses(session: string, replies: ResponsesReply[]): Promise<void> {
  await control("script-responses", { session, replies });
}

/** Every Responses API request the session received (refused ones included), in order. */
export async function openaiResponsesRequests(session: string): Promise<RecordedRequest[]> {
  return (await fetch(`${serverUrl()}/__kiln/responses-requests?session=${encodeURIComponent(session)}`)).json();
}

/**
 * The session's containers (made through the Containers API or by the code interpreter's auto mode): status,
 * temp folder, whether an interpreter runs, and their files (each `path` a real path on this host).
 */
export async function openaiContainers(session: string): Promise<ContainerSnapshot[]> {
  return (await fetch(`${serverUrl()}/__kiln/containers?session=${encodeURIComponent(session)}`)).json();
}

/** Expire a container now, as 20 idle minutes would: its interpreter stops and its files are gone. */
export async function expireContainer(id: string): Promise<void> {
  await control("expire-container", { id });
}

/** Change how the session's server behaves: CORS headers, the models it lists, a key it requires. */
export async function configureOpenAI(session: string, config: SessionConfig): Promise<void> {
  await control("configure", { session, ...config });
}

/** A session of its own per test, so tests running side by side never share replies or settings. */
export function uniqueSession(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_-]/g, "-")}-${Math.random().toString(36).slice(2, 8)}`;
}
