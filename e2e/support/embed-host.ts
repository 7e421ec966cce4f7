import { test as playwrightTest, type Frame, type FrameLocator, type Page } from "@playwright/test";
import { expect, test } from "./test";
import { KILN_ORIGIN, serveHostPages } from "./host-pages";

export { expect, KILN_ORIGIN, test };

/** With `hostOrigin` only, for suites that drive other engines than Playwright's (e2e/engines). */
// Playwright reads a fixture's dependencies from its first parameter: here, none.
// eslint-disable-next-line no-empty-pattern
export const hostTest = playwrightTest.extend<object, { hostOrigin: string }>({ hostOrigin: [({}, use) => serveHostPages(use, "127.0.0.1"), { scope: "worker" }] });

/** `?code=…` and friends, for a `frame` parameter. */
export function widgetQuery(params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString();
  return query ? `?${query}` : "";
}

/** Open the host page with one widget per query string. */
export async function openHost(page: Page, hostOrigin: string, frames: string[]): Promise<void> {
  const query = new URLSearchParams(frames.map((frame) => ["frame", frame])).toString();
  await page.goto(`${hostOrigin}/?${query}`);
}

export interface Received {
  frame: number;
  origin: string;
  data: { kiln: number; type: string; id?: unknown; [key: string]: unknown };
}

export function received(page: Page): Promise<Received[]> {
  return page.evaluate(() => (window as unknown as { received: Received[] }).received);
}

/** The messages frame `frame` has sent so far, of one type. */
export async function messagesOf(page: Page, frame: number, type: string, id?: unknown): Promise<Received["data"][]> {
  return (await received(page))
    .filter((m) => m.frame === frame && m.data?.type === type && (id === undefined || m.data.id === id))
    .map((m) => m.data);
}

export async function send(page: Page, frame: number, message: unknown): Promise<void> {
  await page.evaluate(([f, m]) => (window as unknown as { send: (f: number, m: unknown) => void }).send(f as number, m), [
    frame,
    message,
  ] as const);
}

/** `writeFile` with an ArrayBuffer made in the host page (an ArrayBuffer cannot leave the test process). */
export async function sendBytes(page: Page, frame: number, path: string, bytes: number[]): Promise<void> {
  await page.evaluate(
    ([f, p, b]) =>
      (window as unknown as { send: (f: number, m: unknown) => void }).send(f as number, {
        kiln: 1,
        type: "writeFile",
        path: p,
        data: new Uint8Array(b as number[]).buffer,
      }),
    [frame, path, bytes] as const,
  );
}

/** Wait for the frame's `ready`. */
export async function waitForReady(page: Page, frame: number): Promise<Received["data"]> {
  await expect.poll(async () => (await messagesOf(page, frame, "ready")).length, { timeout: 90_000 }).toBeGreaterThan(0);
  return (await messagesOf(page, frame, "ready"))[0];
}

/** Send `run` and wait for its `result`. */
export async function runInWidget(
  page: Page,
  frame: number,
  id: string,
  code: string,
  timeout = 60_000,
): Promise<Received["data"]> {
  await send(page, frame, { kiln: 1, type: "run", id, code });
  return waitForResult(page, frame, id, timeout);
}

/** Wait until frame `frame` has streamed `text` for run `id` (the run is under way). */
export async function waitForStream(page: Page, frame: number, id: string, text: string): Promise<void> {
  await expect
    .poll(async () => (await messagesOf(page, frame, "stream", id)).map((m) => m.text).join(""), { timeout: 60_000 })
    .toContain(text);
}

export async function waitForResult(page: Page, frame: number, id: string, timeout = 60_000): Promise<Received["data"]> {
  await expect.poll(async () => (await messagesOf(page, frame, "result", id)).length, { timeout }).toBe(1);
  return (await messagesOf(page, frame, "result", id))[0];
}

/** Locators inside widget `frame`. */
export function widget(page: Page, frame: number): FrameLocator {
  return page.frameLocator(`#widget-${frame}`);
}

/** Widget `frame`'s document, to evaluate in. */
export async function widgetFrame(page: Page, frame: number): Promise<Frame> {
  const handle = await page.locator(`#widget-${frame}`).elementHandle();
  const content = await handle?.contentFrame();
  if (!content) throw new Error(`No widget frame ${frame}`);
  return content;
}
