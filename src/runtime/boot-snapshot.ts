/**
 * Python starts from a memory snapshot of a booted interpreter. The first worker on a page
 * with no snapshot boots Pyodide normally, imports Kiln's package, and sends back a snapshot
 * of its heap (before it runs anything else, so nobody's code is in it), unless a run is
 * waiting for that worker: making the snapshot would hold the run's output up, so that
 * worker only boots, and a later one (its session's spare, started once the run has ended)
 * makes it. The page keeps it in
 * IndexedDB (the worker's opaque origin has no storage; see snapshot-store.ts), keyed by the
 * exact Pyodide build and Kiln's version, and every later start (page loads, warm spares,
 * Restart, widgets) restores it. A snapshot that is unreadable, fails its checksum, or that the
 * worker cannot restore is a normal boot instead: counted, never an error the person sees.
 */
import type { BootKind, RuntimeInfo } from "../../workers/python-api";
import { PYODIDE_VERSION } from "../versions";
import { version as KILN_VERSION } from "../../package.json";
import { MAX_SNAPSHOT_BYTES, readSnapshot, writeSnapshot } from "./snapshot-store";
import { dropPeerSnapshot, giveUpMaking, offerFromPeers, shareWithPeers, sharingWithPeers } from "./snapshot-peers";

/** Restores of one snapshot that may fail before snapshots are given up for this build. */
const MAX_FAILED_RESTORES = 2;

/** How this page's workers started, for the benchmark and tests. */
const counts: Record<BootKind, number> = { snapshot: 0, fresh: 0, fallback: 0 };

export function bootCounts(): Record<BootKind, number> {
  return { ...counts };
}

/** What a worker starts with: a stored snapshot to restore, and whether to make one if it boots normally. */
export interface SnapshotOffer {
  snapshot?: { data: Blob; checksum: string };
  makeSnapshot: boolean;
  /** Earlier restores of the stored snapshot that failed. */
  failures: number;
}

interface Stored {
  snapshot?: { data: Blob; checksum: string };
  failures: number;
  /** This page may not use storage: its snapshot is shared with Kiln's other pages in the host page (see snapshot-peers.ts). */
  noStorage?: boolean;
}

/** Restores that failed in workers that made no snapshot to replace it: counted with the next snapshot stored. */
let failedSinceStored = 0;
/** One read of the stored snapshot per page (and per store), shared by every worker. */
let stored: Promise<Stored> | undefined;
/** A store in progress: reads wait for it, so a spare started meanwhile gets the new one. */
let storing: Promise<void> = Promise.resolve();

/**
 * Where the snapshot of this build lives: Pyodide's version, Kiln's, and the worker's URL,
 * which names the exact build of the worker (Pyodide's JavaScript and Kiln's Python inside).
 * None in development (the worker's code changes without its URL changing) or without
 * IndexedDB.
 */
function snapshotKey(workerUrl: string): string | undefined {
  if (import.meta.env.DEV || typeof indexedDB === "undefined") return undefined;
  const build = encodeURIComponent(new URL(workerUrl, location.href).pathname);
  return new URL(`${import.meta.env.BASE_URL}python-snapshot/${PYODIDE_VERSION}/${KILN_VERSION}/${build}`, location.href).href;
}

/**
 * The stored snapshot as a Blob: it reaches the worker by reference, and the worker reads it,
 * checks its checksum and writes its pages into the new interpreter's memory (the page never
 * copies or hashes it).
 */
async function readStored(key: string): Promise<Stored> {
  await storing;
  try {
    const record = await readSnapshot(key);
    if (!record) return { failures: 0 };
    const { data, checksum, failures } = record;
    if (failures >= MAX_FAILED_RESTORES) return { failures };
    return { snapshot: { data, checksum }, failures };
  } catch {
    // No storage here (a widget in a browser that blocks third-party storage).
    return { failures: 0, noStorage: true };
  }
}

/** Releases this page's hold on making the snapshot (see {@link makeOrWait}). */
let release: (() => void) | undefined;
/** How long a page waits for another page's snapshot before it boots normally. */
const WAIT_FOR_SNAPSHOT_MS = 30_000;

/**
 * With no snapshot stored, one page of the site makes it and the others wait for it: the
 * widgets of one page all start together, and one normal boot then nine restores costs far
 * less than ten normal boots side by side. A worker that may not make it (`mayMake` false)
 * still waits for another page's. Resolves true when this page waited for another page.
 */
async function waitForMaker(key: string, mayMake: boolean): Promise<boolean> {
  const locks = typeof navigator !== "undefined" ? navigator.locks : undefined;
  if (!locks || release) return false;
  const name = `kiln-python-snapshot ${key}`;
  const free = await new Promise<boolean>((resolve) => {
    locks
      .request(name, { ifAvailable: true }, (lock) => {
        resolve(Boolean(lock));
        // Held until this page's snapshot is stored, or its worker could not make one.
        return lock && mayMake ? new Promise<void>((done) => (release = done)) : undefined;
      })
      .catch(() => resolve(true));
  });
  if (free) return false;
  const waited = locks.request(name, () => undefined).catch(() => undefined);
  await Promise.race([waited, new Promise((resolve) => setTimeout(resolve, WAIT_FOR_SNAPSHOT_MS))]);
  return true;
}

/** This page is done making the snapshot (stored, or its worker could not start): other pages go on. */
function releaseSnapshotHold(): void {
  release?.();
  release = undefined;
}

/** A worker given `offer` did not start (it failed, or was ended first): pages waiting for its snapshot go on. */
export function abandonOffer(offer: SnapshotOffer): void {
  giveUpMaking(offer);
  releaseSnapshotHold();
}

/**
 * What the next worker of this page starts from; `starting` is that worker's start (a page
 * without storage takes until then to agree with its peers). With `mayMake` false (a run is
 * waiting for this worker) it restores a snapshot there is, or one another page is making,
 * but never makes one. Never rejects.
 */
export async function offerSnapshot(workerUrl: string, starting: Promise<unknown>, mayMake = true): Promise<SnapshotOffer> {
  const key = snapshotKey(workerUrl);
  if (!key) return { makeSnapshot: false, failures: 0 };
  stored ??= readStored(key);
  const found = await stored;
  if (found.noStorage) return offerFromPeers(key, starting, mayMake);
  let { snapshot, failures } = found;
  if (!snapshot && failures < MAX_FAILED_RESTORES && (await waitForMaker(key, mayMake))) {
    // Another page made it meanwhile (or gave up): read again.
    stored = readStored(key);
    ({ snapshot, failures } = await stored);
  }
  // A worker whose restore fails boots normally and makes a new snapshot, until too many failed.
  return { makeSnapshot: mayMake && failures < MAX_FAILED_RESTORES, failures, ...(snapshot ? { snapshot } : {}) };
}

/**
 * Count how a worker started and keep the snapshot it made; returns its info without the
 * snapshot.
 */
export function settleBoot(workerUrl: string, offer: SnapshotOffer, info: RuntimeInfo): RuntimeInfo {
  const { snapshot: made, ...rest } = info;
  // Bytes where Blobs do not reach the page whole (see WorkerApi.readsBlobs).
  const snapshot = made && { data: made.data instanceof Blob ? made.data : new Blob([made.data as Uint8Array<ArrayBuffer>]), checksum: made.checksum };
  counts[info.boot] += 1;
  if (info.boot === "fallback") console.info(`Python started without its snapshot: ${info.bootNote ?? "it could not be restored"}.`);
  const key = snapshotKey(workerUrl);
  if (sharingWithPeers()) {
    if (info.boot === "fallback") dropPeerSnapshot();
    // Only the one worker asked to make it; anything else is not passed on.
    if (offer.makeSnapshot && snapshot && snapshot.data.size <= MAX_SNAPSHOT_BYTES) shareWithPeers(snapshot);
    else giveUpMaking(offer);
    return rest;
  }
  if (key && snapshot && snapshot.data.size <= MAX_SNAPSHOT_BYTES) {
    // A stored snapshot that could not be restored counts against this build; the new one replaces it.
    const failures = info.boot === "fallback" ? offer.failures + 1 : failedSinceStored;
    failedSinceStored = 0;
    storing = storing.then(() => keep(key, snapshot, failures));
    stored = undefined;
  } else if (key && info.boot === "fallback") {
    // No new snapshot from this worker: this page's next workers boot normally (the next that may make one does).
    failedSinceStored = offer.failures + 1;
    stored = Promise.resolve({ failures: failedSinceStored });
  }
  void storing.then(releaseSnapshotHold);
  return rest;
}

async function keep(key: string, snapshot: { data: Blob; checksum: string }, failures: number): Promise<void> {
  try {
    // Snapshots of other builds are of no use any more: writing it deletes them.
    await writeSnapshot(key, { ...snapshot, failures });
  } catch (error) {
    // A full quota or no storage: the next start boots normally.
    console.warn("Kiln could not keep Python's start-up snapshot.", error);
  }
}
