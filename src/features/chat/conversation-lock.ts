/**
 * One tab at a time continues a conversation. Two tabs answering in one conversation would
 * each number its messages from its own copy, and the saved order would interleave. The tab
 * that opens it first holds a Web Lock named after it; any other tab shows it read-only,
 * follows what the first one saves, and takes over when the first one lets go (another
 * conversation opened, or the tab closed), or at once with "Use it here", which makes the first
 * tab read-only in turn once it has stopped its answer and saved what it got to.
 */
import { useEffect, useRef, useState } from "react";

/** `waiting` until the lock answers (a moment); `here` when this tab continues it; `elsewhere` when another tab does. */
export type Hold = "waiting" | "here" | "elsewhere";

interface Note {
  type: "saved" | "released";
  id: string;
}

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("kiln-conversations") : undefined;

/** Tell other tabs showing conversation `id` that a message of it was saved. */
export function announceSaved(id: string): void {
  channel?.postMessage({ type: "saved", id } satisfies Note);
}

/** Call `listener` whenever another tab says `type` about conversation `id`. Returns the unsubscribe. */
export function onNote(type: Note["type"], id: string, listener: () => void): () => void {
  const handle = (event: MessageEvent<Note>) => {
    if (event.data?.type === type && event.data.id === id) listener();
  };
  channel?.addEventListener("message", handle);
  return () => channel?.removeEventListener("message", handle);
}

/** How long a tab taking over waits for the other one to save what its answer got to. */
const RELEASE_WAIT_MS = 5000;

/**
 * This tab's hold on conversation `id`. `onLost` runs when another tab takes it over (it stops
 * this tab's answer and resolves once its last save is done), before that tab is told to go on.
 */
export function useConversationLock(id: string, onLost: () => Promise<void>): { hold: Hold; takeOver: () => void } {
  const locks = typeof navigator !== "undefined" ? navigator.locks : undefined;
  const [hold, setHold] = useState<Hold>(locks ? "waiting" : "here");
  const lost = useRef(onLost);
  useEffect(() => {
    lost.current = onLost;
  });
  const takeOverRef = useRef<() => void>(() => undefined);

  useEffect(() => {
    if (!locks) return;
    const name = `kiln-conversation:${id}`;
    const closed = new AbortController();
    let letGo = () => undefined as void;
    const closing = new Promise<void>((resolve) => (letGo = resolve));
    /** Whether a request of this tab already waits in line. */
    let inLine = false;
    /** Holds the lock until the view closes. */
    const held = async (waitFirst?: Promise<void>) => {
      await waitFirst;
      if (closed.signal.aborted) return;
      setHold("here");
      await closing;
    };
    const onEnd = (error: unknown) => {
      if (closed.signal.aborted) return;
      // Taken over by another tab (or the request was refused): read-only here, and next in line.
      setHold("elsewhere");
      if (error instanceof DOMException && error.name === "AbortError") {
        void lost.current().finally(() => channel?.postMessage({ type: "released", id } satisfies Note));
      }
      queue();
    };
    const queue = () => {
      if (inLine) return;
      inLine = true;
      const turn = () => {
        inLine = false;
        return held();
      };
      void locks.request(name, { signal: closed.signal }, turn).catch((error: unknown) => {
        inLine = false;
        onEnd(error);
      });
    };
    takeOverRef.current = () => {
      let off = () => undefined as void;
      const released = new Promise<void>((resolve) => {
        off = onNote("released", id, resolve);
        setTimeout(resolve, RELEASE_WAIT_MS);
      }).finally(off);
      void locks.request(name, { steal: true }, () => held(released)).catch(onEnd);
    };
    void locks
      .request(name, { ifAvailable: true }, (lock) => {
        if (lock) return held();
        setHold("elsewhere");
        queue();
      })
      .catch(onEnd);
    return () => {
      closed.abort();
      letGo();
      setHold("waiting");
    };
  }, [id, locks]);

  return { hold, takeOver: () => takeOverRef.current() };
}
