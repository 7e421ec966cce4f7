/**
 * Widgets in a browser that gives embedded frames of another site no storage (no Cache Storage,
 * no Web Locks) still start from one snapshot per host page: Kiln's pages in that host page
 * share it over a BroadcastChannel, which only pages of Kiln's own origin in the same storage
 * partition can use (neither the host page nor Python, whose frame's origin is opaque). One
 * page makes it, chosen by lot among the pages that ask at the same time; the others wait for
 * it (as pages wait for a stored one), and a page that asks later gets it from any page that
 * holds it. What a page passes on is only ever a snapshot that a worker of Kiln's made as the
 * answer to its start-up call, before any code ran in it. Nothing is kept once the host page is
 * gone.
 */
import type { SnapshotOffer } from "./boot-snapshot";
import { MAX_SNAPSHOT_BYTES } from "./snapshot-store";

interface Snapshot {
  data: Blob;
  checksum: string;
}

type PeerMessage =
  | { type: "ask"; ticket: number; reply: boolean }
  | { type: "making" }
  | { type: "snapshot"; snapshot: Snapshot }
  | { type: "none" };

/**
 * How long pages that ask together take at least to find out which of them makes the snapshot;
 * they take until their worker has started too (on a busy machine an answer can take longer).
 */
const ELECTION_MS = 300;
/**
 * How long a page waits for another page's snapshot: while its maker says every
 * {@link MAKING_EVERY_MS} that it is still at it, up to {@link WAIT_MS} in all; once nothing was
 * heard for {@link QUIET_MS} (its maker froze, crashed or was closed without a word), it boots
 * on its own. A slow maker on a busy machine is waited for (one boot and restores cost far less
 * than boots side by side); a gone one holds nobody up for long.
 */
const WAIT_MS = 60_000;
const QUIET_MS = 20_000;
const MAKING_EVERY_MS = 2_000;

let channel: BroadcastChannel | undefined;
/** The snapshot this page made or was given. */
let held: Snapshot | undefined;
/** A snapshot failed to restore here: this page takes no other. */
let refused = false;
/** The offer of this page's one worker that makes the snapshot, while it does. */
let making: SnapshotOffer | undefined;
/** This page's ticket while it takes part in choosing a maker, and whether a page beat it. */
let ticket: number | undefined;
let beaten = false;
/** The choice under way, which workers of this page that ask meanwhile share. */
let offer: Promise<SnapshotOffer> | undefined;
/** Those waiting for a snapshot (undefined: its maker gave up). */
const waiting = new Set<(snapshot: Snapshot | undefined) => void>();
/** When a page last said it makes the snapshot (or when this page began to wait). */
let heardMaker = 0;
/** While this page makes the snapshot: says so to the pages waiting for it, every {@link MAKING_EVERY_MS}. */
let sayMaking: ReturnType<typeof setInterval> | undefined;

function isPeerMessage(value: unknown): value is PeerMessage {
  if (typeof value !== "object" || value === null) return false;
  const message = value as Record<string, unknown>;
  switch (message.type) {
    case "ask":
      return Number.isFinite(message.ticket) && typeof message.reply === "boolean";
    case "snapshot": {
      const snapshot = message.snapshot as Record<string, unknown> | null;
      return (
        typeof snapshot === "object" &&
        snapshot !== null &&
        snapshot.data instanceof Blob &&
        snapshot.data.size > 0 &&
        snapshot.data.size <= MAX_SNAPSHOT_BYTES &&
        typeof snapshot.checksum === "string" &&
        /^[0-9a-f]{16}$/.test(snapshot.checksum)
      );
    }
    default:
      return message.type === "making" || message.type === "none";
  }
}

function post(message: PeerMessage): void {
  channel?.postMessage(message);
}

function settle(snapshot: Snapshot | undefined): void {
  for (const resolve of waiting) resolve(snapshot);
  waiting.clear();
}

function receive(message: PeerMessage): void {
  switch (message.type) {
    case "ask":
      if (held) post({ type: "snapshot", snapshot: held });
      else if (making) post({ type: "making" });
      else if (ticket !== undefined) {
        if (message.ticket < ticket) {
          // That page will make it, once its worker has started.
          beaten = true;
          heardMaker = Date.now();
        }
        // A page that started asking after this one did not hear it: it does now.
        else if (!message.reply) post({ type: "ask", ticket, reply: true });
      }
      return;
    case "making":
      heardMaker = Date.now();
      if (ticket !== undefined) beaten = true;
      return;
    case "snapshot":
      if (refused) return;
      held ??= message.snapshot;
      settle(held);
      return;
    case "none":
      // An earlier maker gave up: pages choosing a maker now go on choosing.
      if (ticket === undefined) settle(undefined);
  }
}

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

/**
 * A snapshot from another page (or this page's maker), or undefined once its maker gave up, went
 * quiet for {@link QUIET_MS}, or after {@link WAIT_MS} in all.
 */
function snapshotToCome(): Promise<Snapshot | undefined> {
  const began = Date.now();
  heardMaker = Math.max(heardMaker, began);
  return new Promise<Snapshot | undefined>((resolve) => {
    const check = setInterval(() => {
      const now = Date.now();
      if (now - began < WAIT_MS && now - heardMaker < QUIET_MS) return;
      waiting.delete(done);
      done(undefined);
    }, 1000);
    const done = (snapshot: Snapshot | undefined) => {
      clearInterval(check);
      resolve(snapshot);
    };
    waiting.add(done);
  });
}

/** This page makes the snapshot (`offer`), or no longer does (undefined); the pages waiting hear it while it does. */
function makingNow(offer: SnapshotOffer | undefined): void {
  making = offer;
  clearInterval(sayMaking);
  sayMaking = offer ? setInterval(() => post({ type: "making" }), MAKING_EVERY_MS) : undefined;
}

const bootNormally = (snapshot?: Snapshot): SnapshotOffer => ({ makeSnapshot: false, failures: 0, ...(snapshot ? { snapshot } : {}) });

/** A ticket above every drawn one: a page that may not make the snapshot never wins the lot. */
const NEVER_MAKES = 2;

async function choose(key: string, starting: Promise<unknown>, mayMake: boolean): Promise<SnapshotOffer> {
  if (!channel) {
    channel = new BroadcastChannel(`kiln-python-snapshot ${key}`);
    channel.onmessage = (event: MessageEvent<unknown>) => {
      if (isPeerMessage(event.data)) receive(event.data);
    };
    // A page that goes away while it makes the snapshot says so: the others boot normally.
    if (typeof addEventListener === "function") addEventListener("pagehide", () => making && post({ type: "none" }));
  }
  const given = snapshotToCome();
  const mine = mayMake ? Math.random() : NEVER_MAKES;
  ticket = mine;
  beaten = false;
  post({ type: "ask", ticket: mine, reply: false });
  const chosen = Promise.all([after(ELECTION_MS, null), starting.catch(() => undefined)]).then(() => null);
  const early = await Promise.race([given, chosen]);
  ticket = undefined;
  if (early !== null) return bootNormally(early);
  if (!beaten) return mayMake ? { makeSnapshot: true, failures: 0 } : bootNormally();
  return bootNormally(await given);
}

/**
 * What the next worker of a page without storage starts from, decided once `starting` (its
 * worker's start) has settled. With `mayMake` false it takes a snapshot a page has or is
 * making, and otherwise boots normally. Never rejects.
 */
export async function offerFromPeers(key: string, starting: Promise<unknown>, mayMake = true): Promise<SnapshotOffer> {
  if (held || refused || typeof BroadcastChannel === "undefined") return bootNormally(held);
  // Another worker of this page makes it: this one waits for it too.
  if (making) return bootNormally(await snapshotToCome());
  offer ??= choose(key, starting, mayMake);
  const chosen = await offer;
  offer = undefined;
  if (!chosen.makeSnapshot) return chosen;
  // Workers of this page that asked together: the first makes it, the others wait for it.
  if (making) return bootNormally(await snapshotToCome());
  makingNow(chosen);
  return chosen;
}

/** Whether this page's snapshots go to its peers (it has no storage). */
export function sharingWithPeers(): boolean {
  return channel !== undefined;
}

/** This page's worker made the snapshot: every page waiting for it gets it, and so does any page that asks later. */
export function shareWithPeers(snapshot: Snapshot): void {
  held ??= snapshot;
  makingNow(undefined);
  post({ type: "snapshot", snapshot: held });
  settle(held);
}

/** The worker given `given` made no snapshot (it failed to start): the pages waiting for it boot normally. */
export function giveUpMaking(given: SnapshotOffer): void {
  if (given !== making) return;
  makingNow(undefined);
  post({ type: "none" });
  settle(undefined);
}

/** The snapshot could not be restored here: this page's later workers boot normally. */
export function dropPeerSnapshot(): void {
  held = undefined;
  refused = true;
}
