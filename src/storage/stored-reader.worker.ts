/**
 * Reads saved output in a thread of its own (see read-off-thread.ts): what an older version
 * saved may be tens of megabytes in one record, and IndexedDB copies a record into the thread
 * that reads it, in one task. Capped here, only what the limits keep reaches the page.
 */
import { loadMessages } from "./conversations";
import { migratePlayground } from "./migrate-playground";
import { loadNotebook } from "./notebooks";
import type { ReadReply, ReadRequest } from "./read-off-thread";

self.onmessage = async (event: MessageEvent<ReadRequest>) => {
  const request = event.data;
  let reply: ReadReply;
  try {
    const value =
      request.what === "notebook"
        ? await loadNotebook(request.id)
        : request.what === "migrate-playground"
          ? await migratePlayground()
          : await loadMessages(request.conversationId);
    reply = { ok: true, value };
  } catch (error) {
    reply = { ok: false, name: error instanceof Error ? error.name : "Error", message: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
};
