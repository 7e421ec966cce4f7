/**
 * One tab at a time continues a conversation (or edits and runs a notebook). Two tabs
 * answering in one conversation would each number its messages from its own copy, and the saved order would interleave. The tab
 * that opens it first holds a Web Lock named after it; any other tab shows it read-only,
 * follows what the first one saves, and takes over when the first one lets go (another
 * conversation opened, or the tab closed), or at once with "Use it here", which makes the first
 * tab read-only in turn once it has stopped its answer and saved what it got to.
 */
import { useCallback, useEffect, useRef, useState } from "react";

/**
 * `waiting` until the lock answers (a moment); `here` when this tab continues it; `elsewhere`
 * when another tab does; `taking` while this tab waits for that one to stop and save.
 */
export type Hold = "waiting" | "here" | "elsewhere" | "taking";

interface Note {
  type: "saved" | "released" | "deleted";
  id: string;
}

const locks = typeof navigator !== "undefined" ? navigator.locks : undefined;

/** How long a tab taking over waits for the other one to save what its answer got to. */
const RELEASE_WAIT_MS = 15_000;
/** How long a tab waits for the lock before it shows the conversation as continued elsewhere. */
const ELSEWHERE_AFTER_MS = 300;
/** How long a delete waits for the tab continuing the conversation to stop and save. */
const DELETE_WAIT_MS = 20_000;

/**
 * The lock and the notes of one kind of thing held by one tab at a time: `conversation`
 * (locks `kiln-conversation:<id>`, notes on the channel `kiln-conversations`) or `notebook`.
 */
export function tabLocks(kind: string) {
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`kiln-${kind}s`) : undefined;
  const lockName = (id: string) => `kiln-${kind}:${id}`;

  /** Tell other tabs showing conversation `id` that a message of it was saved. */
  function announceSaved(id: string): void {
    channel?.postMessage({ type: "saved", id } satisfies Note);
  }

  /** Tell other tabs that conversation `id` is deleted: they close it, and stop any answer in it. */
  function announceDeleted(id: string): void {
    channel?.postMessage({ type: "deleted", id } satisfies Note);
  }

  /** Call `listener` whenever another tab says `type` about conversation `id`. Returns the unsubscribe. */
  function onNote(type: Note["type"], id: string, listener: () => void): () => void {
    return onAnyNote(type, (about) => about === id && listener());
  }

  /** Call `listener` with the conversation whenever another tab says `type` about one. Returns the unsubscribe. */
  function onAnyNote(type: Note["type"], listener: (id: string) => void): () => void {
    const handle = (event: MessageEvent<Note>) => {
      if (event.data?.type === type && typeof event.data.id === "string") listener(event.data.id);
    };
    channel?.addEventListener("message", handle);
    return () => channel?.removeEventListener("message", handle);
  }

  /**
   * Deletes conversation `id` everywhere: `remove` runs at once (a reload right after finds it
   * gone), other tabs close it (stopping any answer, and saving what it got to), and `remove`
   * runs again once none continues it, so that nothing of it written meanwhile stays.
   */
  async function deleteEverywhere(id: string, remove: () => Promise<void>): Promise<void> {
    announceDeleted(id);
    await remove();
    await locks?.request(lockName(id), { signal: AbortSignal.timeout(DELETE_WAIT_MS) }, remove).catch(() => undefined);
  }

  /**
   * This tab's hold on conversation `id`. `onLost` runs when another tab takes it over and when
   * this view closes (it stops this tab's answer and resolves once its last save is done),
   * before any other tab is let go on. `isHere()` says, at the moment it is called, whether this
   * tab still continues it.
   */
  function useTabLock(
    id: string,
    onLost: () => Promise<void>,
  ): { hold: Hold; takeOver: () => void; isHere: () => boolean } {
    const [hold, setHoldState] = useState<Hold>(locks ? "waiting" : "here");
    const current = useRef<Hold>(hold);
    const lost = useRef(onLost);
    useEffect(() => {
      lost.current = onLost;
    });
    const takeOverRef = useRef<() => void>(() => undefined);

    useEffect(() => {
      if (!locks) return;
      const setHold = (next: Hold) => {
        current.current = next;
        setHoldState(next);
      };
      const name = lockName(id);
      const closed = new AbortController();
      let letGo = () => undefined as void;
      const closing = new Promise<void>((resolve) => (letGo = resolve));
      /** Bumped whenever the lock is taken from this tab: a take-over still waiting then does not go on. */
      let generation = 0;
      /** Whether a request of this tab already waits in line. */
      let inLine = false;
      /** Holds the lock until the view closes. */
      const held = async (waitFirst?: Promise<void>) => {
        const mine = generation;
        await waitFirst;
        if (closed.signal.aborted || mine !== generation) return;
        setHold("here");
        await closing;
      };
      const onEnd = (error: unknown) => {
        if (closed.signal.aborted) return;
        if (!(error instanceof DOMException && error.name === "AbortError")) {
          // Web Locks refused (not taken by another tab): this tab continues it, as without them.
          setHold("here");
          return;
        }
        // Taken over by another tab: read-only here, once the answer here has stopped and saved, and next in line.
        generation++;
        setHold("elsewhere");
        void lost.current().finally(() => channel?.postMessage({ type: "released", id } satisfies Note));
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
        if (current.current !== "elsewhere") return;
        setHold("taking");
        let off = () => undefined as void;
        const released = new Promise<void>((resolve) => {
          off = onNote("released", id, resolve);
          setTimeout(resolve, RELEASE_WAIT_MS);
        }).finally(off);
        void locks.request(name, { steal: true }, () => held(released)).catch(onEnd);
      };
      queue();
      const shown = setTimeout(() => current.current === "waiting" && setHold("elsewhere"), ELSEWHERE_AFTER_MS);
      return () => {
        clearTimeout(shown);
        closed.abort();
        // The lock goes once this view's answer has stopped and saved: the next tab reads all of it.
        void lost.current().finally(letGo);
        setHold("waiting");
      };
    }, [id]);

    const takeOver = useCallback(() => takeOverRef.current(), []);
    const isHere = useCallback(() => current.current === "here", []);
    return { hold, takeOver, isHere };
  }

  return { announceSaved, announceDeleted, onNote, onAnyNote, deleteEverywhere, useTabLock };
}
