import type { SessionSnapshot } from "../../workers/python-api";
import type { ChatMessage, Conversation } from "../model/conversation";
import { bounded } from "../model/session-snapshot";
import { openAppDb } from "./db";
import { dropKept } from "./kept-saves";
import { capStoredOutputs } from "./output-caps";

/**
 * Conversations whose delete has begun, noted in localStorage (one key each, `kiln-deleting:<id>`,
 * so that tabs noting at once lose none), which is written at once: a reload or a closed tab
 * right after a Delete cannot bring the conversation back, because the next start finishes the
 * delete.
 */
const DELETING = "kiln-deleting:";

function deletesBegun(): string[] {
  try {
    return Object.keys(localStorage)
      .filter((key) => key.startsWith(DELETING))
      .map((key) => key.slice(DELETING.length));
  } catch {
    return [];
  }
}

function note(change: () => void): void {
  try {
    change();
  } catch {
    // No localStorage (blocked, or full): the delete still goes on, only a reload in its first moments can undo it.
  }
}

export function deleteBegun(id: string): void {
  note(() => localStorage.setItem(DELETING + id, "1"));
}

export function deleteDone(id: string): void {
  note(() => localStorage.removeItem(DELETING + id));
}

/** Finishes the deletes that a page closed or reloaded before storage had written; returns their conversations. */
export async function finishBegunDeletes(): Promise<string[]> {
  const begun = deletesBegun();
  for (const id of begun) await deleteConversation(id).then(() => deleteDone(id), () => undefined);
  return begun;
}

/**
 * Every conversation, newest first; with none, `first` is saved and is the list. The list is read
 * on its own (a read waits for no other tab's write: some browsers let one write at a time into a
 * database, whatever its stores); only an empty one is read again and started in one write, so
 * two callers at once (a view mounted twice) find the same first conversation.
 */
export async function listOrStartConversations(first: () => Conversation): Promise<Conversation[]> {
  const db = await openAppDb();
  const read = await db.getAllFromIndex("conversations", "updatedAt");
  if (read.length) return read.reverse();
  const tx = db.transaction("conversations", "readwrite");
  const list = (await tx.store.index("updatedAt").getAll()).reverse();
  if (!list.length) {
    const created = first();
    await tx.store.put(created);
    list.push(created);
  }
  await tx.done;
  return list;
}

export async function saveConversation(conversation: Conversation): Promise<void> {
  const db = await openAppDb();
  await db.put("conversations", conversation);
}

/** A conversation with its messages and interpreter state, gone for good. */
export async function deleteConversation(id: string): Promise<void> {
  // Refused writes of its parts are not tried again: before the delete, nor after it (each would bring a part back).
  dropKept(id);
  const db = await openAppDb();
  const tx = db.transaction(["conversations", "messages", "interpreterState", "sandboxes", "files", "drafts"], "readwrite");
  const keys = await tx.objectStore("messages").index("conversationId").getAllKeys(id);
  const files = await tx.objectStore("files").index("scope").getAllKeys(`chat:${id}`);
  await Promise.all([
    tx.objectStore("conversations").delete(id),
    ...keys.map((key) => tx.objectStore("messages").delete(key)),
    tx.objectStore("interpreterState").delete(id),
    tx.objectStore("interpreterState").delete(interpreterStateRange(id)),
    tx.objectStore("sandboxes").delete(`chat:${id}`),
    ...files.map((key) => tx.objectStore("files").delete(key)),
    tx.objectStore("drafts").delete(id),
  ]);
  await tx.done;
  dropKept(id);
}

export async function loadMessages(conversationId: string): Promise<ChatMessage[]> {
  const db = await openAppDb();
  const messages = await db.getAllFromIndex("messages", "conversationId", conversationId);
  // What an older version stored may hold displays of any size: capped as it is read.
  return messages
    .sort((a, b) => a.seq - b.seq)
    .map((message) => (message.cells ? { ...message, cells: message.cells.map((cell) => ({ ...cell, outputs: capStoredOutputs(cell.outputs ?? []) })) } : message));
}

export async function saveMessage(message: ChatMessage): Promise<void> {
  const db = await openAppDb();
  await db.put("messages", message);
}

/** Separates a conversation's id from the keys of its interpreter state's values. */
const VALUE_KEY_SEPARATOR = "\u0000";
/** Each value buffer's key suffix, made once per buffer: a buffer never changes once captured. */
const bufferKeys = new WeakMap<Uint8Array, string>();
/** Value keys this page knows to be stored. */
const storedValueKeys = new Set<string>();

function valueKey(conversationId: string, bytes: Uint8Array): string {
  let suffix = bufferKeys.get(bytes);
  if (!suffix) bufferKeys.set(bytes, (suffix = crypto.randomUUID()));
  return `${conversationId}${VALUE_KEY_SEPARATOR}${suffix}`;
}

/** The keys of every value stored for a conversation (or any scope whose state is kept so). */
export const interpreterStateRange = (conversationId: string) =>
  IDBKeyRange.bound(`${conversationId}${VALUE_KEY_SEPARATOR}`, `${conversationId}${VALUE_KEY_SEPARATOR}\uffff`);

/**
 * Reads and writes of a conversation's values, this many at a time: each step's requests are
 * made together and the next step waits for them, so no task of the page handles them all.
 */
const VALUE_STEP = 500;

async function inSteps<T>(items: readonly T[], each: (item: T) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += VALUE_STEP) await Promise.all(items.slice(start, start + VALUE_STEP).map(each));
}

/**
 * A conversation's saved interpreter state, at most {@link MAX_SAVED_VARIABLES} names of it (what
 * an older version kept past that is counted in `notKept`, and never read).
 */
export async function loadInterpreterState(conversationId: string): Promise<SessionSnapshot | undefined> {
  const db = await openAppDb();
  const tx = db.transaction("interpreterState");
  const record = await tx.store.get(conversationId);
  if (!record || record instanceof Uint8Array) return undefined;
  const { valueKeys, ...stored } = record;
  const snapshot = bounded(stored);
  if (!valueKeys) return snapshot; // written by an older version: values inline
  const values: Record<string, Uint8Array> = { ...snapshot.values };
  const named = new Set(snapshot.names);
  const wanted = Object.entries(valueKeys).filter(([name]) => named.has(name));
  await inSteps(wanted, async ([name, key]) => {
    const bytes = await tx.store.get(key);
    if (!(bytes instanceof Uint8Array)) return;
    values[name] = bytes;
    bufferKeys.set(bytes, key.slice(conversationId.length + VALUE_KEY_SEPARATOR.length));
    storedValueKeys.add(key);
  });
  await tx.done;
  return { ...snapshot, values };
}

/**
 * Store a conversation's interpreter state. Each value is a record of its own, written once:
 * values unchanged since the last save (the very same buffers) are not written again, and
 * values the snapshot no longer holds are deleted.
 */
export async function saveInterpreterState(conversationId: string, snapshot: SessionSnapshot): Promise<void> {
  snapshot = bounded(snapshot);
  const db = await openAppDb();
  const tx = db.transaction("interpreterState", "readwrite");
  const previous = await tx.store.get(conversationId);
  const valueKeys: Record<string, string> = {};
  const written: [string, Uint8Array][] = [];
  for (const [name, bytes] of Object.entries(snapshot.values)) {
    const key = valueKey(conversationId, bytes);
    valueKeys[name] = key;
    if (!storedValueKeys.has(key)) written.push([key, bytes]);
  }
  const kept = new Set(Object.values(valueKeys));
  const deleted =
    previous && !(previous instanceof Uint8Array) && previous.valueKeys ? Object.values(previous.valueKeys).filter((key) => !kept.has(key)) : [];
  const done = tx.done;
  // A refused write fails its step, and then `done`, which is awaited below only if the steps succeed.
  done.catch(() => undefined);
  await inSteps(written, ([key, bytes]) => tx.store.put(bytes, key));
  await inSteps(deleted, (key) => tx.store.delete(key));
  await tx.store.put({ ...snapshot, values: {}, valueKeys }, conversationId);
  await done;
  for (const [key] of written) storedValueKeys.add(key);
  for (const key of deleted) storedValueKeys.delete(key);
}

export async function loadDraft(conversationId: string): Promise<string> {
  const db = await openAppDb();
  return (await db.get("drafts", conversationId)) ?? "";
}

/** Keep what the person is typing; an empty draft is removed. */
export async function saveDraft(conversationId: string, text: string): Promise<void> {
  const db = await openAppDb();
  if (text) await db.put("drafts", text, conversationId);
  else await db.delete("drafts", conversationId);
}
