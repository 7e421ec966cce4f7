/**
 * Whether everything Kiln keeps in this browser has been deleted (from this tab or another):
 * from then on, until a reload, this tab keeps nothing. Storage refuses to open (so that no
 * save creates the databases again), and each part of the page that holds storage or a Python
 * worker lets go of it when told.
 */

/**
 * Where the delete is: begun here (going, waiting for another tab to close its storage, done, or
 * failed, with why), or begun in another tab (and whether done there).
 */
export type Erasure =
  | { by: "this tab"; done: boolean; waiting: boolean; failed?: string }
  | { by: "another tab"; done: boolean };

let erasure: Erasure | null = null;
const listeners = new Set<() => void>();
const letGo = new Set<() => void>();

/** What a save or read after the delete fails with, in words. */
export class ErasedError extends Error {
  override name = "ErasedError";
  constructor() {
    super("Everything Kiln kept in this browser was deleted: nothing is kept again until the page is reloaded.");
  }
}

export const currentErasure = (): Erasure | null => erasure;
export const storageErased = (): boolean => erasure !== null;

/** Throws {@link ErasedError} once everything was deleted. */
export function refuseIfErased(): void {
  if (erasure) throw new ErasedError();
}

/** Calls `listener` whenever the delete's state changes (for `useSyncExternalStore`). */
export function onErasure(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** `release` runs once, when everything is deleted: it closes databases, stops workers. */
export function whenErased(release: () => void): void {
  letGo.add(release);
}

/** Enters (or moves on in) the deleted state; the first time, everything registered lets go. */
export function setErasure(next: Erasure): void {
  const first = erasure === null;
  erasure = next;
  if (first) {
    for (const release of letGo) {
      try {
        release();
      } catch (error) {
        console.error("Could not let go of storage for the delete.", error);
      }
    }
  }
  for (const listener of listeners) listener();
}
