import type { SessionSnapshot } from "../../workers/python-api";
import type { ChatMessage, Conversation } from "../model/conversation";
import { openAppDb } from "./db";

/**
 * Every conversation, newest first; with none, `first` is saved and is the list. One transaction:
 * two callers at once (a view mounted twice) find the same first conversation.
 */
export async function listOrStartConversations(first: () => Conversation): Promise<Conversation[]> {
  const db = await openAppDb();
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
  const db = await openAppDb();
  const tx = db.transaction(["conversations", "messages", "interpreterState", "sandboxes", "files", "drafts"], "readwrite");
  const keys = await tx.objectStore("messages").index("conversationId").getAllKeys(id);
  const files = await tx.objectStore("files").index("scope").getAllKeys(`chat:${id}`);
  await Promise.all([
    tx.objectStore("conversations").delete(id),
    ...keys.map((key) => tx.objectStore("messages").delete(key)),
    tx.objectStore("interpreterState").delete(id),
    tx.objectStore("sandboxes").delete(`chat:${id}`),
    ...files.map((key) => tx.objectStore("files").delete(key)),
    tx.objectStore("drafts").delete(id),
  ]);
  await tx.done;
}

export async function loadMessages(conversationId: string): Promise<ChatMessage[]> {
  const db = await openAppDb();
  const messages = await db.getAllFromIndex("messages", "conversationId", conversationId);
  return messages.sort((a, b) => a.seq - b.seq);
}

export async function saveMessage(message: ChatMessage): Promise<void> {
  const db = await openAppDb();
  await db.put("messages", message);
}

export async function loadInterpreterState(conversationId: string): Promise<SessionSnapshot | undefined> {
  const db = await openAppDb();
  return db.get("interpreterState", conversationId);
}

export async function saveInterpreterState(conversationId: string, snapshot: SessionSnapshot): Promise<void> {
  const db = await openAppDb();
  await db.put("interpreterState", snapshot, conversationId);
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
