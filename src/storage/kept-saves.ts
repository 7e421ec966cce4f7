import { storageFailure } from "./db";

/**
 * Writes of a conversation's parts that must not be lost when storage refuses them (a full
 * disk, most often): each is kept, with its value, and tried again until it is written or a
 * newer write of the same part replaces it, and meanwhile the page says what a reload would
 * lose. Each write stores its part whole (a message, the conversation's record, its variables,
 * its draft), so the newest write of a part is the only one worth trying again, and what is
 * read back from storage is older than a kept value (readers prefer the kept one).
 *
 * Keys are `<conversation id>:<part>`.
 */
interface Refused {
  /** What the person would lose, as a phrase: "an answer", "your draft". */
  what: string;
  value: unknown;
  write: () => Promise<void>;
  /** Why storage refused it the last time. */
  why: string;
  /** Not tried again before this time (each refusal waits longer, up to a minute). */
  nextTry: number;
  waitMs: number;
}

const FIRST_WAIT_MS = 4000;
const LONGEST_WAIT_MS = 60_000;
const refused = new Map<string, Refused>();
/** The newest write of each part: an older one that fails later is not kept. */
const newest = new Map<string, () => Promise<void>>();
/** Conversations deleted while this page is open: their parts are written no more. */
const deleted = new Set<string>();
/** Parts that another tab now writes (`<conversation id>:<part>`): not written from here until this tab continues the conversation again. */
const leftToOthers = new Set<string>();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setTimeout> | undefined;
let shown: RefusedSave[] = [];

export interface RefusedSave {
  key: string;
  conversationId: string;
  what: string;
  /** Why storage refused it the last time ("QuotaExceededError: …"). */
  why: string;
}

const conversationOf = (key: string) => key.slice(0, key.indexOf(":"));

function changed() {
  shown = [...refused].map(([key, { what, why }]) => ({ key, conversationId: conversationOf(key), what, why }));
  listeners.forEach((listener) => listener());
  schedule();
  // While a write is refused, closing or reloading the page asks first (the browser's own "Leave site?").
  if (typeof window === "undefined") return;
  if (refused.size) window.addEventListener("beforeunload", askFirst);
  else window.removeEventListener("beforeunload", askFirst);
}

function askFirst(event: BeforeUnloadEvent) {
  event.preventDefault();
}

/** The next retry, at the soonest end of a wait (writes being tried now are not waited for: each reschedules as it ends). */
function schedule() {
  clearTimeout(timer);
  timer = undefined;
  const waits = [...refused].filter(([key]) => !retrying.has(key)).map(([, entry]) => entry.nextTry);
  if (waits.length) timer = setTimeout(() => retry(), Math.max(0, Math.min(...waits) - Date.now()));
}

/** Refused writes being tried again now. */
const retrying = new Set<string>();

/** Tries again each refused write whose wait is over (`now`: every one, storage has just taken a write). */
function retry(now = false) {
  for (const [key, entry] of refused) {
    if (retrying.has(key) || (!now && entry.nextTry > Date.now())) continue;
    retrying.add(key);
    void attempt(key, entry.what, entry.value, entry.write).finally(() => {
      retrying.delete(key);
      schedule();
    });
  }
  schedule();
}

const writable = (key: string) => !deleted.has(conversationOf(key)) && !leftToOthers.has(key);

async function attempt(key: string, what: string, value: unknown, write: () => Promise<void>): Promise<boolean> {
  if (!writable(key)) return false;
  try {
    await write();
    if (newest.get(key) === write) newest.delete(key);
    const wasRefused = refused.get(key);
    if (wasRefused?.write === write) {
      refused.delete(key);
      changed();
    }
    // A refused write taken means room: every other refused write is tried now. A fresh write
    // taken tries only those whose wait is over (a small write that fits must not copy a large
    // refused one again and again).
    if (refused.size) retry(wasRefused !== undefined);
    return true;
  } catch (error) {
    if (newest.get(key) !== write || !writable(key)) return false;
    console.error(`Could not save ${what}.`, error);
    const before = refused.get(key);
    const waitMs = before ? Math.min(before.waitMs * 2, LONGEST_WAIT_MS) : FIRST_WAIT_MS;
    refused.set(key, { what, value, write, why: storageFailure(error), nextTry: Date.now() + waitMs, waitMs });
    changed();
    return false;
  }
}

/**
 * Writes `value`, one part of a conversation (`write` stores it whole); resolves with whether it
 * was written this time. A refused write is kept and tried again (see above); while one is
 * refused, the part stays listed as unsaved until a write of it succeeds.
 */
export function saveKept<T>(key: string, what: string, value: T, write: (value: T) => Promise<void>): Promise<boolean> {
  if (!writable(key)) return Promise.resolve(false);
  const bound = () => write(value);
  newest.set(key, bound);
  const before = refused.get(key);
  // Replaced by this newer value, and still listed until it is written.
  if (before) refused.set(key, { ...before, value, write: bound });
  return attempt(key, what, value, bound);
}

/** The value a refused write of `key` holds, newer than what storage has. */
export function keptValue<T>(key: string): T | undefined {
  return refused.get(key)?.value as T | undefined;
}

/** The values of refused writes whose key starts with `prefix`. */
export function keptValues<T>(prefix: string): T[] {
  return [...refused].filter(([key]) => key.startsWith(prefix)).map(([, entry]) => entry.value as T);
}

/**
 * Drops a conversation's refused writes, and every later write of it: the conversation was
 * deleted, and a write would bring part of it back.
 */
export function dropKept(conversationId: string) {
  deleted.add(conversationId);
  drop((key) => conversationOf(key) === conversationId);
}

/**
 * Another tab continues the conversation (`here` false): its refused writes of `parts` are
 * dropped, and `parts` are not written from this tab, whose copy is now older, until it
 * continues the conversation again (`here` true).
 */
export function leaveKept(conversationId: string, parts: string[], here: boolean) {
  const keys = parts.map((part) => `${conversationId}:${part}`);
  if (here) return keys.forEach((key) => leftToOthers.delete(key));
  keys.forEach((key) => leftToOthers.add(key));
  drop((key) => keys.includes(key));
}

function drop(gone: (key: string) => boolean) {
  let dropped = false;
  for (const key of [...newest.keys()]) if (gone(key)) newest.delete(key);
  for (const key of [...refused.keys()]) if (gone(key)) dropped = refused.delete(key) || dropped;
  if (dropped) changed();
}

export function onRefusedSaves(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Every refused write not written yet, in the order they were first refused. */
export function refusedSaves(): RefusedSave[] {
  return shown;
}
