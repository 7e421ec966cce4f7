import { storageFailure } from "./db";

/**
 * Writes of a conversation's parts that must not be lost when storage refuses them (a full
 * disk, most often): each is tried again until it is written or a newer write of the same part
 * replaces it, and meanwhile the page says what a reload would lose. Each write stores its part
 * whole (a message, the conversation's record, its variables, its draft), so the newest write
 * of a part is the only one worth trying again.
 */
interface Refused {
  /** What the person would lose, as a phrase: "an answer", "your draft". */
  what: string;
  write: () => Promise<void>;
  /** Why storage refused it the last time. */
  why: string;
}

const RETRY_MS = 4000;
const refused = new Map<string, Refused>();
/** The newest write of each part: an older one that fails later is not kept. */
const newest = new Map<string, () => Promise<void>>();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setTimeout> | undefined;
let shown: RefusedSaves = { whats: [], why: "" };

export interface RefusedSaves {
  /** What is not saved yet, each phrase once. */
  whats: string[];
  /** Why the last refusal happened ("QuotaExceededError: …"). */
  why: string;
}

function changed() {
  const all = [...refused.values()];
  shown = { whats: [...new Set(all.map((r) => r.what))], why: all[all.length - 1]?.why ?? "" };
  listeners.forEach((listener) => listener());
  clearTimeout(timer);
  timer = refused.size ? setTimeout(retryAll, RETRY_MS) : undefined;
}

/** Refused writes being tried again now. */
const retrying = new Set<string>();

function retryAll() {
  for (const [key, { what, write }] of refused) {
    if (retrying.has(key)) continue;
    retrying.add(key);
    void attempt(key, what, write).finally(() => retrying.delete(key));
  }
}

async function attempt(key: string, what: string, write: () => Promise<void>): Promise<boolean> {
  try {
    await write();
    if (newest.get(key) === write) newest.delete(key);
    if (refused.get(key)?.write === write) {
      refused.delete(key);
      changed();
    }
    // Storage takes writes again: whatever it refused before is tried now, not in a few seconds.
    if (refused.size) retryAll();
    return true;
  } catch (error) {
    if (newest.get(key) !== write) return false;
    console.error(`Could not save ${what}.`, error);
    refused.set(key, { what, write, why: storageFailure(error) });
    changed();
    return false;
  }
}

/**
 * Writes one part of a conversation, keyed `<conversation id>:<part>`; resolves with whether it
 * was written this time. A refused write is kept and tried again (see above).
 */
export function saveKept(key: string, what: string, write: () => Promise<void>): Promise<boolean> {
  newest.set(key, write);
  if (refused.delete(key)) changed();
  return attempt(key, what, write);
}

/** A conversation deleted: none of its refused writes is tried again (one would bring part of it back). */
export function dropKept(conversationId: string) {
  const prefix = `${conversationId}:`;
  let dropped = false;
  for (const key of [...newest.keys()]) if (key.startsWith(prefix)) newest.delete(key);
  for (const key of [...refused.keys()]) if (key.startsWith(prefix)) dropped = refused.delete(key) || dropped;
  if (dropped) changed();
}

export function onRefusedSaves(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function refusedSaves(): RefusedSaves {
  return shown;
}
