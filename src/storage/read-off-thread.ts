import type { ChatMessage } from "../model/conversation";
import { loadMessages } from "./conversations";
import type { PlaygroundRecord } from "./db";
import { loadPlayground } from "./playground";

export type ReadRequest = { what: "playground" } | { what: "messages"; conversationId: string };
export type ReadReply = { ok: true; value: unknown } | { ok: false; name: string; message: string };

/**
 * `request` read by a worker of its own, which ends with it; `here` where no worker can start
 * (the same read on this thread). A read that fails there fails here, with its error's name.
 */
function readOffThread<T>(request: ReadRequest, here: () => Promise<T>): Promise<T> {
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

/** The Playground as saved, its output within the limits, read off the page's thread. */
export const readPlayground = () => readOffThread<PlaygroundRecord | undefined>({ what: "playground" }, loadPlayground);

/** A conversation's messages as saved, their outputs within the limits, read off the page's thread. */
export const readMessages = (conversationId: string) =>
  readOffThread<ChatMessage[]>({ what: "messages", conversationId }, () => loadMessages(conversationId));
