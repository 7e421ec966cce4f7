import { useMemo, useSyncExternalStore, type DragEvent } from "react";
import type { PythonSession } from "../../runtime/python-session";
import { getSessionFiles, type FilesState, type SessionFiles } from "../../runtime/session-files";

const NONE: FilesState = { files: [], progress: "", problem: "" };

/** A scope's files and their live state; null until the session exists. */
export function useSessionFiles(scope: string, session: PythonSession | null): { files: SessionFiles | null; state: FilesState } {
  const files = useMemo(() => (session ? getSessionFiles(scope, session) : null), [scope, session]);
  const state = useSyncExternalStore(
    (listener) => files?.subscribe(listener) ?? (() => undefined),
    () => files?.current ?? NONE,
  );
  return { files, state };
}

/** Props that make an element accept dropped files. */
export function fileDropTarget(files: SessionFiles | null) {
  return {
    onDragOver: (event: DragEvent) => {
      if (event.dataTransfer.types.includes("Files")) event.preventDefault();
    },
    onDrop: (event: DragEvent) => {
      if (!event.dataTransfer.files.length) return;
      event.preventDefault();
      void files?.upload([...event.dataTransfer.files]);
    },
  };
}
