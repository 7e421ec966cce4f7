import type { Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { expect, test } from "./support/test";
import { openPlayground, output, run } from "./support/playground";
import {
  messagesOf,
  openHost,
  runInWidget,
  send,
  waitForReady,
  widget,
  widgetFrame,
  widgetQuery,
} from "./support/embed-host";

import { inSnapshotStore } from "./support/snapshot-seed";

// A test here starts as a first visit, with no snapshot stored, unless it says otherwise.
test.use({ repeatVisit: false });

/** How the Playground's current interpreter started: "fresh", "snapshot" or "fallback". */
function boot(page: Page) {
  return page.getByRole("status").filter({ hasText: "Python ready" });
}

/**
 * hash-wasm's own xxHash64 build, evaluated in the page (as DevTools would: the page's policy
 * does not apply), so the stored snapshots are checked where they are instead of sent here.
 */
const XXHASH64 = readFileSync(createRequire(import.meta.url).resolve("hash-wasm/dist/xxhash64.umd.min.js"), "utf8");

interface StoredSnapshot {
  key: string;
  size: number;
  /** The checksum kept with it, and the xxHash64 of its content taken now. */
  checksum: string | null;
  actual: string;
  matches: boolean;
  first: number;
}

/** The page's copy of hash-wasm's xxHash64 (see XXHASH64). */
declare const hashwasm: { createXXHash64(): Promise<{ init(): { update(bytes: Uint8Array): { digest(kind: "hex"): string } } }> };

/** The stored snapshots, each read once in the page (nothing large is sent here). */
async function storedSnapshots(page: Page): Promise<StoredSnapshot[]> {
  await page.evaluate(XXHASH64);
  return inSnapshotStore(page, async (store) => {
    const stored = [];
    for (const { key, data, checksum } of await store.entries()) {
      const bytes = new Uint8Array(await data.arrayBuffer());
      const actual = (await hashwasm.createXXHash64()).init().update(bytes).digest("hex");
      stored.push({ key, size: bytes.length, checksum, actual, matches: checksum === actual, first: bytes[0] });
    }
    return stored;
  });
}

/** Wait until the first boot's snapshot is stored. */
async function snapshotStored(page: Page) {
  await expect.poll(async () => (await storedSnapshots(page)).length, { timeout: 60_000 }).toBe(1);
  return (await storedSnapshots(page))[0];
}

/** Replace the stored snapshot's bytes, keeping or recomputing the checksum stored with it. */
async function damageSnapshot(page: Page, how: "bytes" | "content") {
  await inSnapshotStore(
    page,
    async (store, how) => {
      const [entry] = await store.entries();
      const bytes = new Uint8Array(await entry.data.arrayBuffer());
      // "bytes": damaged on disk, so the checksum no longer matches; "content": not a
      // snapshot Pyodide can restore (wrong magic number), with its checksum made to match below.
      if (how === "bytes") bytes[bytes.length >> 1] ^= 0xff;
      else bytes.fill(7, 0, 64);
      await store.put({ ...entry, data: new Blob([bytes]) });
    },
    how,
  );
  if (how === "bytes") return;
  const [{ actual: checksum }] = await storedSnapshots(page);
  await inSnapshotStore(
    page,
    async (store, checksum) => {
      const [entry] = await store.entries();
      await store.put({ ...entry, checksum });
    },
    checksum,
  );
}

async function randomNumber(page: Page): Promise<string> {
  await run(page, "import random\nprint(random.random())");
  return (await output(page).textContent()) ?? "";
}

test("Python starts from its snapshot on a repeat visit and after Restart, with fresh random seeds", async ({ page }) => {
  await openPlayground(page);
  await expect(boot(page)).toHaveAttribute("data-boot", "fresh");
  const stored = await snapshotStored(page);
  expect(stored.size).toBeGreaterThan(1 << 20);

  await page.reload();
  await expect(boot(page)).toHaveAttribute("data-boot", "snapshot", { timeout: 90_000 });
  const first = await randomNumber(page);
  await run(page, "x = 6 * 7\nprint(x)");
  await expect(output(page)).toHaveText("42");

  // Restart takes the warm spare, which started from the snapshot too; nothing of before is in it.
  await page.getByRole("button", { name: "Restart" }).click();
  await expect(boot(page)).toHaveAttribute("data-boot", "snapshot", { timeout: 90_000 });
  await run(page, "print('x' in globals())");
  await expect(output(page)).toHaveText("False");
  // Each restored interpreter draws its own random numbers, not the snapshot's.
  const second = await randomNumber(page);
  expect(first).toMatch(/^0\.\d+\s*$/);
  expect(second).toMatch(/^0\.\d+\s*$/);
  expect(second).not.toBe(first);

  // Again: this spare loaded after the first Restart, in a worker whose code its frame had
  // loaded ahead once the first spare was ready.
  await run(page, "y = 1");
  await page.getByRole("button", { name: "Restart" }).click();
  await expect(boot(page)).toHaveAttribute("data-boot", "snapshot", { timeout: 90_000 });
  await run(page, "print('y' in globals())");
  await expect(output(page)).toHaveText("False");
  const third = await randomNumber(page);
  expect(third).toMatch(/^0\.\d+\s*$/);
  expect(new Set([first, second, third]).size).toBe(3);
});

test.describe("from a repeat visit", () => {
  // The snapshot a first visit stored is there already.
  test.use({ repeatVisit: true });

  for (const [how, what] of [
    ["bytes", "damaged (its checksum fails)"],
    ["content", "intact but not restorable"],
  ] as const) {
    test(`a snapshot that is ${what} falls back to a normal start, unseen, and is replaced`, async ({ page }) => {
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(error.message));
      await openPlayground(page);
      const good = await snapshotStored(page);
      await damageSnapshot(page, how);
      const [damaged] = await storedSnapshots(page);
      expect(damaged.matches).toBe(how === "content");
      expect(damaged.first === good.first).toBe(how === "bytes");

      await page.reload();
      await expect(boot(page)).toHaveAttribute("data-boot", "fallback", { timeout: 90_000 });
      await run(page, "print(sum(range(10)))");
      await expect(output(page)).toHaveText("45");
      await expect(page.getByRole("alert")).toHaveCount(0);
      expect(problems).toEqual([]);

      // The fallback's own boot made a new snapshot, which the next visit uses.
      await expect
        .poll(async () => (await storedSnapshots(page)).map(({ matches, first }) => ({ matches, first })), { timeout: 60_000 })
        .toEqual([{ matches: true, first: good.first }]);
      await page.reload();
      await expect(boot(page)).toHaveAttribute("data-boot", "snapshot", { timeout: 90_000 });
    });
  }

  test("a snapshot of another build is not used, and is deleted once this build's is stored", async ({ page }) => {
    await openPlayground(page);
    const good = await snapshotStored(page);
    // An older Kiln's snapshot under its own key, and this build's removed.
    await inSnapshotStore(
      page,
      async (store, key) => {
        const [entry] = await store.entries();
        await store.put({ ...entry, key: key.replace("/python-snapshot/", "/python-snapshot/0.0.0-old/") });
        await store.remove(key);
      },
      good.key,
    );
    await page.reload();
    await expect(boot(page)).toHaveAttribute("data-boot", "fresh", { timeout: 90_000 });
    await expect.poll(async () => (await storedSnapshots(page)).map((entry) => entry.key), { timeout: 60_000 }).toEqual([good.key]);
  });
});

test("a widget starts from the snapshot on the host's next visit, and so does its restart", async ({ page, sameSiteHostOrigin }) => {
  // The host page is of the widget's own site: Playwright's contexts are private windows, which
  // block storage to embedded frames of other sites (there the widget boots normally each time).
  await openHost(page, sameSiteHostOrigin, [widgetQuery()]);
  await waitForReady(page, 0);
  await expect(widget(page, 0).getByRole("status")).toHaveAttribute("data-boot", "fresh");
  // The widget keeps its snapshot in its own storage.
  const stored = async () => inSnapshotStore(await widgetFrame(page, 0), async (store) => (await store.entries()).length);
  await expect.poll(stored, { timeout: 60_000 }).toBe(1);

  await page.reload();
  await waitForReady(page, 0);
  await expect(widget(page, 0).getByRole("status")).toHaveAttribute("data-boot", "snapshot");
  expect((await runInWidget(page, 0, "sum", "sum(range(10))")).value).toEqual({ "text/plain": "45" });
  await send(page, 0, { kiln: 1, type: "restart" });
  await expect.poll(async () => (await messagesOf(page, 0, "ready")).length, { timeout: 90_000 }).toBe(2);
  await expect(widget(page, 0).getByRole("status")).toHaveAttribute("data-boot", "snapshot");
  expect((await runInWidget(page, 0, "after", "sum(range(4))")).value).toEqual({ "text/plain": "6" });
});
