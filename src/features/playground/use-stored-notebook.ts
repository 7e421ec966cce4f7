import { useCallback, useEffect, useRef, useState, type RefObject } from "react";
import type { OutputItem } from "../../model/output";
import type { Notebook } from "../../notebook/model";
import { welcomeNotebook } from "../../notebook/welcome";
import { storageFailure } from "../../storage/db";
import { leaveKept } from "../../storage/kept-saves";
import { saveCellOutputs, saveNotebook } from "../../storage/notebooks";
import { readNotebook } from "../../storage/read-off-thread";
import { tabLocks, type Hold } from "../tab-lock";
import type { NotebookRuns } from "./notebook-runs";

/** One tab at a time edits and runs a notebook; the others follow it read-only (see tab-lock.ts). */
export const notebookLocks = tabLocks("notebook");

/** Edits are saved this long after the last one. */
const SAVE_AFTER_MS = 250;

/** Notebooks whose interpreter was already brought back on this page. */
export const restoredOnThisPage = new Set<string>();

interface Callbacks {
  /** The notebook's title as stored (read here, or saved by another tab). */
  onTitle: (id: string, title: string) => void;
  /** The notebook is not in storage (deleted meanwhile). */
  onMissing: (id: string) => void;
}

/**
 * Notebook `id` as this tab shows it, kept in step with storage: read when this tab takes it
 * (and at each save of the tab that edits it, while this one follows), saved shortly after each
 * edit and at once when the page is left; each run's outputs saved as they come.
 */
export function useStoredNotebook(
  id: string,
  hold: Hold,
  runs: NotebookRuns,
  /** The notebook as shown, up to the last edit: set here with each edit, before React renders it. */
  shownRef: RefObject<Notebook | null>,
  { onTitle, onMissing }: Callbacks,
) {
  const [notebook, setNotebook] = useState<Notebook | null>(null);
  /** An edit not saved yet. */
  const dirty = useRef(false);
  const [saveProblem, setSaveProblem] = useState("");
  const [loadProblem, setLoadProblem] = useState("");
  /** The notebook as stored has been read since this tab took it: until then nothing typed here could be kept. */
  const [readHere, setReadHere] = useState(false);
  const here = hold === "here";

  /** Apply `update` to the notebook shown, and save it shortly. */
  const change = useCallback((update: (notebook: Notebook) => Notebook) => {
    const before = shownRef.current;
    if (!before) return;
    const next = update(before);
    if (next === before) return;
    shownRef.current = next;
    dirty.current = true;
    setNotebook(next);
  }, [shownRef]);

  const saveOutputs = useCallback(
    (cellId: string, outputs: readonly OutputItem[]) =>
      saveCellOutputs(id, cellId, [...outputs]).then(
        () => {
          notebookLocks.announceSaved(id);
          setSaveProblem("");
        },
        (error: unknown) => {
          console.error("Could not save a cell's output.", error);
          setSaveProblem(storageFailure(error));
        },
      ),
    [id],
  );

  /** Saves the edits not saved yet, now. */
  const persist = useCallback(async () => {
    const shown = shownRef.current;
    if (!shown || !dirty.current) return;
    dirty.current = false;
    try {
      await saveNotebook({ ...shown, updatedAt: Date.now() });
      notebookLocks.announceSaved(id);
      setSaveProblem("");
      setLoadProblem("");
    } catch (error) {
      console.error("Could not save the notebook.", error);
      // Saved again at the next edit.
      dirty.current = true;
      setSaveProblem(storageFailure(error));
    }
  }, [id, shownRef]);

  // Saved shortly after each edit.
  useEffect(() => {
    if (!notebook || !dirty.current || !here) return;
    const timer = setTimeout(() => void persist(), SAVE_AFTER_MS);
    return () => clearTimeout(timer);
  }, [notebook, here, persist]);

  // Leaving the page (a reload, a closed tab) saves what was typed since the last save at once.
  useEffect(() => {
    if (!here) return;
    const leave = () => void persist();
    window.addEventListener("pagehide", leave);
    return () => window.removeEventListener("pagehide", leave);
  }, [here, persist]);

  // While an edit is not saved, closing or reloading the page asks first (the browser's own "Leave site?").
  useEffect(() => {
    if (!saveProblem) return;
    const askFirst = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", askFirst);
    return () => window.removeEventListener("beforeunload", askFirst);
  }, [saveProblem]);

  // The notebook as stored: read when this tab takes it, and again at each save of the tab that edits it while this one follows.
  useEffect(() => {
    if (hold === "waiting") return;
    let cancelled = false;
    const show = (stored: Notebook) => {
      shownRef.current = stored;
      dirty.current = false;
      setNotebook(stored);
      for (const cell of stored.cells) runs.cell(cell.id, cell.outputs).owner.show(cell.outputs);
      runs.countFrom(Math.max(0, ...stored.cells.map((cell) => cell.executionCount ?? 0)));
    };
    const load = () =>
      readNotebook(id).then(
        (stored) => {
          if (cancelled) return;
          if (!stored) return onMissing(id);
          show(stored);
          setLoadProblem("");
          onTitle(id, stored.title);
        },
        (error: unknown) => {
          if (cancelled) return;
          setLoadProblem(storageFailure(error));
          // What is stored stays: the example shown is not saved over it until the person edits or runs code here.
          if (!shownRef.current) show({ ...welcomeNotebook(), id });
        },
      );
    if (hold !== "here") {
      // The tab that edits it holds the newer variables: they are brought back here if this tab takes over.
      restoredOnThisPage.delete(id);
      leaveKept(id, ["variables"], false);
      void load();
      const stopFollowing = notebookLocks.onNote("saved", id, () => void load());
      return () => {
        cancelled = true;
        stopFollowing();
      };
    }
    leaveKept(id, ["variables"], true);
    // Editable once read: what the other tab saved last comes in first, and is not put over what is typed here.
    void load().then(() => !cancelled && setReadHere(true));
    return () => {
      cancelled = true;
      setReadHere(false);
    };
  }, [hold, id, runs, shownRef, onTitle, onMissing]);

  return { notebook, change, persist, saveOutputs, saveProblem, loadProblem, readHere };
}
