import type { ChatMessage } from "../model/conversation";
import { ErasedError, storageErased } from "./erased";
import { loadMessages } from "./conversations";
import type { Notebook } from "../notebook/model";
import { migratePlayground, playgroundToMigrate } from "./migrate-playground";
import { listNotebooks, loadNotebook, type NotebookSummary } from "./notebooks";

export type ReadRequest = { what: "notebook"; id: string } | { what: "migrate-playground" } | { what: "messages"; conversationId: string };
export type ReadReply = { ok: true; value: unknown } | { ok: false; name: string; message: string };

/**
 * `request` read by a worker of its own, which ends with it; `here` where no worker can start
 * (the same read on this thread). A read that fails there fails here, with its error's name.
 */
function readOffThread<T>(request: ReadRequest, here: () => Promise<T>): Promise<T> {
  // Its worker would open the database again.
  if (storageErased()) return Promise.reject(new ErasedError());
  let worker: Worker;
  try {
    worker = new Worker(new URL("./stored-reader.worker.ts", import.meta.url), { type: "module", name: "kiln-stored-reader" });
  } catch {
    return here();
  }
  return new Promise<T>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<ReadReply>) => {
      worker.terminate();
      const reply = event.data;
      if (reply.ok) resolve(reply.value as T);
      else reject(Object.assign(new Error(reply.message), { name: reply.name }));
    };
    // The worker's code did not load (or it died): read here.
    worker.onerror = (event) => {
      event.preventDefault();
      worker.terminate();
      here().then(resolve, reject);
    };
    worker.postMessage(request);
  });
}

/** A notebook as saved, its outputs within the limits, read off the page's thread. */
export const readNotebook = (id: string) => readOffThread<Notebook | undefined>({ what: "notebook", id }, () => loadNotebook(id));

/**
 * Every notebook, newest first (see `listNotebooks`); the Playground an older version kept is
 * made the first notebook before, off the page's thread.
 */
export async function readNotebookList(first: () => Notebook): Promise<NotebookSummary[]> {
  if (await playgroundToMigrate()) await readOffThread<string>({ what: "migrate-playground" }, migratePlayground);
  return listNotebooks(first);
}

/** A conversation's messages as saved, their outputs within the limits, read off the page's thread. */
export const readMessages = (conversationId: string) =>
  readOffThread<ChatMessage[]>({ what: "messages", conversationId }, () => loadMessages(conversationId));
