/**
 * Widgets in a browser that gives embedded frames of another site no storage (no Cache Storage,
 * no Web Locks) still start from one snapshot per host page: Kiln's pages in that host page
 * share it over a BroadcastChannel, which only pages of Kiln's own origin in the same storage
 * partition can use. One page makes it, chosen by lot among the pages that ask at the same
 * time; the others wait for it (as pages wait for a stored one), and a page that asks later
 * gets it from any page that holds it. Nothing is kept once the host page is gone.
 */
import type { SnapshotOffer } from "./boot-snapshot";

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
/** How long a page waits for another page's snapshot before it boots normally. */
const WAIT_MS = 30_000;

let channel: BroadcastChannel | undefined;
/** The snapshot this page made or was given. */
let held: Snapshot | undefined;
/** This page's first worker is making the snapshot. */
let making = false;
/** This page's ticket while it takes part in choosing a maker, and whether a page beat it. */
let ticket: number | undefined;
let beaten = false;
let offer: Promise<SnapshotOffer> | undefined;
/** Resolves the wait for another page's snapshot (undefined: its maker gave up). */
let arrived: ((snapshot: Snapshot | undefined) => void) | undefined;

function isPeerMessage(value: unknown): value is PeerMessage {
  if (typeof value !== "object" || value === null) return false;
  const message = value as Record<string, unknown>;
  switch (message.type) {
    case "ask":
      return typeof message.ticket === "number" && typeof message.reply === "boolean";
    case "snapshot": {
      const snapshot = message.snapshot as Record<string, unknown> | null;
      return typeof snapshot === "object" && snapshot !== null && snapshot.data instanceof Blob && typeof snapshot.checksum === "string";
    }
    default:
      return message.type === "making" || message.type === "none";
  }
}

function post(message: PeerMessage): void {
  channel?.postMessage(message);
}

function receive(message: PeerMessage): void {
  switch (message.type) {
    case "ask":
      if (held) post({ type: "snapshot", snapshot: held });
      else if (making) post({ type: "making" });
      else if (ticket !== undefined) {
        if (message.ticket < ticket) beaten = true;
        // A page that started asking after this one did not hear it: it does now.
        else if (!message.reply) post({ type: "ask", ticket, reply: true });
      }
      return;
    case "making":
      if (ticket !== undefined) beaten = true;
      return;
    case "snapshot":
      held ??= message.snapshot;
      arrived?.(held);
      return;
    case "none":
      arrived?.(undefined);
  }
}

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

async function choose(key: string, starting: Promise<unknown>): Promise<SnapshotOffer> {
  if (!channel) {
    channel = new BroadcastChannel(`kiln-python-snapshot ${key}`);
    channel.onmessage = (event: MessageEvent<unknown>) => {
      if (isPeerMessage(event.data)) receive(event.data);
    };
  }
  const given = new Promise<Snapshot | undefined>((resolve) => (arrived = resolve));
  const mine = Math.random();
  ticket = mine;
  beaten = false;
  post({ type: "ask", ticket: mine, reply: false });
  const chosen = Promise.all([after(ELECTION_MS, null), starting.catch(() => undefined)]).then(() => null);
  let snapshot = await Promise.race([given, chosen]);
  ticket = undefined;
  if (snapshot === null && !beaten) {
    making = true;
    return { makeSnapshot: true, failures: 0 };
  }
  if (snapshot === null) snapshot = await Promise.race([given, after(WAIT_MS, undefined)]);
  arrived = undefined;
  return { makeSnapshot: false, failures: 0, ...(snapshot ? { snapshot } : {}) };
}

/**
 * What the next worker of a page without storage starts from, decided once `starting` (its
 * worker's start) has settled. Never rejects.
 */
export function offerFromPeers(key: string, starting: Promise<unknown>): Promise<SnapshotOffer> {
  if (held) return Promise.resolve({ makeSnapshot: false, failures: 0, snapshot: held });
  if (typeof BroadcastChannel === "undefined") return Promise.resolve({ makeSnapshot: false, failures: 0 });
  offer ??= choose(key, starting);
  return offer;
}

/** Whether this page's snapshots go to its peers (it has no storage). */
export function sharingWithPeers(): boolean {
  return channel !== undefined;
}

/** This page's worker made the snapshot: every page waiting for it gets it, and so does any page that asks later. */
export function shareWithPeers(snapshot: Snapshot): void {
  held ??= snapshot;
  making = false;
  post({ type: "snapshot", snapshot: held });
}

/** This page's worker made no snapshot (it failed to start): the pages waiting for it boot normally. */
export function giveUpMaking(): void {
  if (!making) return;
  making = false;
  offer = undefined;
  post({ type: "none" });
}

/** The snapshot could not be restored here: this page's later workers boot normally. */
export function dropPeerSnapshot(): void {
  held = undefined;
  making = false;
  offer = Promise.resolve({ makeSnapshot: false, failures: 0 });
}
