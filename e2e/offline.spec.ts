import { type BrowserContext, type Page, type Route } from "@playwright/test";
import { expect, test, useTestPackages } from "./support/test";
import { apiBase, openChat, uniqueKey } from "./support/chat";
import { openPlayground, output, run, startRun } from "./support/playground";
import { PACKAGE_BASE } from "./support/package-fixtures";
import { seedStoredSnapshot } from "./support/snapshot-seed";
import { PYODIDE_VERSION } from "../src/versions";

/** Offline for the page and for its service worker (whose requests `setOffline` alone misses). */
async function goOffline(context: BrowserContext): Promise<void> {
  await context.setOffline(true);
  await context.route("**", (route: Route) =>
    route.request().serviceWorker() ? route.abort("internetdisconnected") : route.continue(),
  );
}

/**
 * Reload while offline. Chromium 150 keeps the emulated network off across a reload but
 * reports `navigator.onLine` as true in the new document until the emulation is sent again
 * (a real offline browser reports false): so it is sent again, on a session kept open.
 */
async function reloadOffline(page: Page): Promise<void> {
  await page.reload();
  const session = await page.context().newCDPSession(page);
  await session.send("Network.emulateNetworkConditions", { offline: true, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
}

test.use({ serviceWorkers: "allow" });

async function serviceWorkerInCharge(page: Page): Promise<void> {
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
}

test("after one visit Kiln works offline: Python starts, runs, loads a package it loaded before, reads files", async ({
  browser,
}) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await openPlayground(page);
  await serviceWorkerInCharge(page);
  // Installable: a manifest with a name, a start URL and icons.
  const manifest = await page.evaluate(async () => {
    const link = document.querySelector<HTMLLinkElement>('link[rel="manifest"]');
    return link ? ((await (await fetch(link.href)).json()) as { name: string; start_url: string; icons: { sizes: string }[] }) : null;
  });
  expect(manifest).toMatchObject({ name: "Kiln", start_url: "." });
  expect(manifest?.icons.map((icon) => icon.sizes)).toEqual(expect.arrayContaining(["192x192", "512x512"]));
  await useTestPackages(page);
  await run(page, "import kilntiny\nprint(kilntiny.GREETING)");
  // The test wheel's known value (e2e/support/package-fixtures.ts), read from its dependency too.
  const greeting = "hello from a tiny wheel";
  await expect(output(page)).toHaveText(greeting);
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Upload files" }).click();
  await (await chooser).setFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("written while online") });
  await expect(page.getByRole("list", { name: "Files" })).toContainText("notes.txt");

  await goOffline(context);
  await reloadOffline(page);
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expect(page.getByText("Offline", { exact: true })).toBeVisible();
  // Served from the cache with the isolation headers: interrupts and input() still work.
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await run(page, "import kilntiny\nprint(kilntiny.GREETING)\nprint(open('notes.txt').read())");
  await expect(output(page)).toContainText(greeting);
  await expect(output(page)).toContainText("written while online");
  await context.close();
});

test("offline, Stop, input() and an interruptible time.sleep still work (the cached pages stay isolated)", async ({ browser, storedSnapshot }) => {
  // A repeat visit (Python's start-up snapshot stored), as in the test above after its first visit.
  const context = await browser.newContext();
  await seedStoredSnapshot(context, await storedSnapshot());
  const page = await context.newPage();
  await openPlayground(page);
  await serviceWorkerInCharge(page);
  await goOffline(context);
  await reloadOffline(page);
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expect(page.getByText("Offline", { exact: true })).toBeVisible();
  await run(page, "kept_offline = 'still here'");

  // input() asks in the page.
  let finished = await startRun(page, 'name = input("Your name? ")\nprint(f"Hello, {name}!")');
  const field = output(page).getByRole("textbox", { name: "Python input" });
  await expect(field).toBeVisible();
  await field.fill("Ada");
  await field.press("Enter");
  await finished();
  await expect(output(page)).toContainText("Hello, Ada!");

  // Stop wakes time.sleep softly: the same interpreter goes on, nothing is restored.
  finished = await startRun(page, 'print("napping")\nimport time\ntime.sleep(1000)');
  await expect(output(page)).toContainText("napping");
  await page.getByRole("button", { name: "Stop" }).click();
  await finished();
  await expect(output(page)).toContainText("Interrupted after");
  await expect(output(page)).toContainText("Variables are kept");
  await expect(output(page)).not.toContainText("restarted");

  // Stop of a Python loop, the same way.
  finished = await startRun(page, 'print("looping")\n__import__("time").sleep(0)\nwhile True:\n    pass');
  await expect(output(page)).toContainText("looping");
  await page.getByRole("button", { name: "Stop" }).click();
  await finished();
  await expect(output(page)).toContainText("Interrupted after");
  await expect(output(page)).not.toContainText("restarted");
  await run(page, "print(kept_offline, name)");
  await expect(output(page)).toHaveText("still here Ada");
  await context.close();
});

test("packages are cached per Pyodide version: an older version's cache is deleted, this version's is used", async ({ browser, storedSnapshot }) => {
  const context = await browser.newContext();
  await seedStoredSnapshot(context, await storedSnapshot());
  const page = await context.newPage();
  const current = `kiln-packages-pyodide-${PYODIDE_VERSION}`;
  const older = "kiln-packages-pyodide-314.0.6";
  // An older Kiln left its package cache behind (written here before this version's service worker exists).
  await page.goto("/manifest.webmanifest");
  await page.evaluate(async ([name, url]) => {
    const cache = await caches.open(name);
    await cache.put(url, new Response("an older build of kilntiny"));
  }, [older, `${PACKAGE_BASE}kilntiny-1.0.0-py3-none-any.whl`]);
  expect(await cacheNames(page)).toContain(older);

  await openPlayground(page);
  await serviceWorkerInCharge(page);
  await expect.poll(() => cacheNames(page)).not.toContain(older);
  await useTestPackages(page);
  await run(page, "import kilntiny\nprint(kilntiny.GREETING)");
  await expect(output(page)).toHaveText("hello from a tiny wheel");
  // This version's cache holds what was loaded, and is the only package cache.
  expect((await cacheNames(page)).filter((name) => name.startsWith("kiln-packages-"))).toEqual([current]);
  const cached = await page.evaluate(async (name) => (await (await caches.open(name)).keys()).map((request) => request.url), current);
  expect(cached).toEqual(
    expect.arrayContaining([
      `${PACKAGE_BASE}pyodide-lock.json`,
      `${PACKAGE_BASE}kilntiny-1.0.0-py3-none-any.whl`,
      `${PACKAGE_BASE}kilntinydep-1.0.0-py3-none-any.whl`,
    ]),
  );
  await context.close();
});

function cacheNames(page: Page): Promise<string[]> {
  return page.evaluate(() => caches.keys());
}

test("offline, the chat says so, sends nothing, and keeps the draft across a reload", async ({ browser, storedSnapshot }) => {
  const context = await browser.newContext();
  await seedStoredSnapshot(context, await storedSnapshot());
  const page = await context.newPage();
  const key = uniqueKey("offline");
  // Every request the browser tries to make to the API, whether or not it could get out.
  const attempts: string[] = [];
  context.on("request", (request) => {
    if (request.url().startsWith(apiBase())) attempts.push(request.url());
  });
  await openChat(page, key);
  // Online, the recorder sees what the page asks the API for (the model list, when the picker is used).
  await page.getByRole("combobox", { name: "Model for this conversation" }).focus();
  await expect.poll(() => attempts.length).toBeGreaterThan(0);
  await serviceWorkerInCharge(page);
  await goOffline(context);
  attempts.length = 0;
  await reloadOffline(page);
  await expect(page.getByRole("status").filter({ hasText: "You are offline" })).toBeVisible({ timeout: 30_000 });
  const message = page.getByRole("textbox", { name: "Message" });
  await message.fill("What is the median of my data?");
  await expect(page.getByRole("button", { name: "Send" })).toBeDisabled();
  await message.press("Enter");
  // The draft is saved as it is typed: wait for it, then reload.
  await expect.poll(() => storedDrafts(page)).toEqual(["What is the median of my data?"]);
  await reloadOffline(page);
  await expect(message).toHaveValue("What is the median of my data?");
  expect(attempts).toEqual([]);
  await context.close();
});

/** The drafts the app keeps in IndexedDB. */
function storedDrafts(page: Page): Promise<string[]> {
  return page.evaluate(
    () =>
      new Promise<string[]>((resolve) => {
        const open = indexedDB.open("kiln");
        open.onsuccess = () => {
          const get = open.result.transaction("drafts").objectStore("drafts").getAll();
          get.onsuccess = () => resolve(get.result as string[]);
        };
      }),
  );
}
