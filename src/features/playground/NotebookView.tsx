import { startTransition, useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import type { SessionSnapshot } from "../../../workers/python-api";
import { runCode } from "../../execution/run-code";
import { answerJupyterInput, jupyterBackend } from "../../execution/jupyter/backend";
import { jupyterServer, restartJupyterKernel } from "../../execution/jupyter/server";
import { changeKind, clearCounts, editSource, insertCell, moveCell, removeCell, setCount } from "../../notebook/edits";
import { newCell, type CellKind, type Notebook } from "../../notebook/model";
import { noSandboxReason, sandboxChoice, sandboxProvider } from "../../providers";
import type { SessionState } from "../../runtime/python-session";
import { sessionConfig } from "../../runtime/session-config";
import { usePythonSession } from "../../runtime/use-python-session";
import { loadNotebookState, notebookScope, saveNotebookState } from "../../storage/notebooks";
import { saveKept } from "../../storage/kept-saves";
import { FilesPanel } from "../files/FilesPanel";
import { useDrawer } from "../../components/drawer";
import { useSessionFiles } from "../files/use-session-files";
import { useSettings } from "../settings/settings-context";
import { restoreVariables } from "../restore-variables";
import { Cell, type CellActions } from "./Cell";
import { NotebookFiles, useNotebookDrop } from "./NotebookFiles";
import { NotebookNotices } from "./NotebookNotices";
import { NotebookRuns, type RunsHost } from "./notebook-runs";
import { RunStatusLine } from "./RunStatusLine";
import { notebookLocks, restoredOnThisPage, useStoredNotebook } from "./use-stored-notebook";

/** What the status line says in a tab that follows another one's runs. */
const FOLLOWING: SessionState = { kind: "loading", message: "Python runs in the tab that edits this notebook" };

/**
 * A long notebook is shown this many cells at first, then this many more per task: hundreds
 * of cells made in one task would hold the page up for longer than a frame or ten.
 */
const FIRST_CELLS = 12;
const MORE_CELLS = 16;

/** The notebook's metadata key that names its kernel: `"jupyter"` for the person's Jupyter server, else the browser. */
export const KERNEL_KEY = "kiln_kernel";

/** Whether the notebook chose the person's Jupyter server as its kernel. */
export const usesJupyterKernel = (notebook: Notebook | null) => notebook?.metadata[KERNEL_KEY] === "jupyter";

function saveVariables(notebookId: string, snapshot: SessionSnapshot) {
  void saveKept(`${notebookId}:variables`, "this notebook's Python variables", snapshot, (value) => saveNotebookState(notebookId, value));
}

interface Props {
  id: string;
  /** The notebook's title changed (typed here, or saved by another tab). */
  onTitle: (id: string, title: string) => void;
  /** The notebook is not in storage (deleted meanwhile). */
  onMissing: (id: string) => void;
}

/**
 * The open notebook: its cells, run one at a time in order in the notebook's own interpreter,
 * its toolbar and files. Edits and outputs are saved as they come, and its variables after
 * each run that ends ok; a reload brings all of them back.
 */
export function NotebookView({ id, onTitle, onMissing }: Props) {
  const { settings, loaded } = useSettings();
  const filesDrawer = useDrawer("Files", 700, "end");
  const [notice, setNotice] = useState("");
  const lastFocused = useRef<string | null>(null);
  const [focusRequest, setFocusRequest] = useState<{ id: string; seq: number } | null>(null);
  const focusCell = useCallback((cellId: string) => setFocusRequest((before) => ({ id: cellId, seq: (before?.seq ?? 0) + 1 })), []);

  const flush = useRef<() => Promise<void>>(async () => undefined);
  /** The notebook's runs (the view is made again for another notebook). */
  const runs = useMemo(() => new NotebookRuns(), []);
  const { hold, takeOver } = notebookLocks.useTabLock(id, async () => {
    runs.stop();
    await runs.idle();
    await flush.current();
  });
  const here = hold === "here";
  /** The notebook as shown, up to the last edit. */
  const current = useRef<Notebook | null>(null);
  const { notebook, change, persist, saveOutputs, saveProblem, loadProblem, readHere } = useStoredNotebook(id, hold, runs, current, { onTitle, onMissing });
  useEffect(() => {
    flush.current = persist;
  }, [persist]);
  const readOnly = !here || !readHere;

  const scope = notebookScope(id);
  // A tab that follows another one's runs has an interpreter too, as a conversation's does: its
  // files are kept and listed as the other tab's are, and it is ready when this tab takes over.
  const config = useMemo(() => (loaded ? sessionConfig(settings, { allowInput: true, network: true }) : null), [loaded, settings]);
  const { session, state } = usePythonSession(scope, config);
  const { files, state: filesState } = useSessionFiles(scope, session);
  const drop = useNotebookDrop(files);
  /** What the runs read when they start and end (the newest session, settings and files). */
  const live = useRef({ session, config, settings, files });
  useEffect(() => {
    live.current = { session, config, settings, files };
  });

  useEffect(() => {
    const host: RunsHost = {
      source: (cellId) => current.current?.cells.find((cell) => cell.id === cellId && cell.kind === "code")?.source,
      execute: (source, { signal, onEvent, target }) => {
        const { session, config, settings } = live.current;
        if (!session || !config) throw new Error("Python is not started in this tab.");
        return runCode(source, {
          session,
          backend: settings.backend,
          sandbox: sandboxChoice(sandboxProvider(settings, notebookScope(id))),
          jupyter: jupyterBackend(settings.jupyter, notebookScope(id), { allowInput: true, outputLimitBytes: config.outputLimitBytes }),
          noSandbox: noSandboxReason(),
          // The person's own code leaves the browser only when they press "Run on <provider>" (or
          // "Run on Jupyter server"), or chose the server as the notebook's kernel.
          askFirst: true,
          forceSandbox: target === "sandbox",
          forceJupyter: target === "jupyter" || usesJupyterKernel(current.current),
          deadlineMs: config.timeoutMs,
          signal,
          onEvent,
        });
      },
      counted: (cellId, count) => change((notebook) => setCount(notebook, cellId, count)),
      outputs: (cellId, outputs) => void saveOutputs(cellId, outputs),
      finished: async (cellId, source, run) => {
        // The code that ran, and its count, are saved with its outputs (not only after the next pause in typing).
        await Promise.all([saveOutputs(cellId, run.outputs), flush.current()]);
        const { session, files, settings } = live.current;
        if (run.outcome.status === "ok" && session) saveVariables(id, session.savedState);
        await files?.sync();
        const sandbox = sandboxChoice(sandboxProvider(settings, notebookScope(id)));
        const jupyter = Boolean(jupyterServer(settings.jupyter));
        if (run.outcome.status === "unavailable" && !run.outcome.ranOn && (sandbox || jupyter)) runs.offer(cellId, sandbox?.provider ?? "", jupyter, source);
      },
    };
    runs.connect(host);
  }, [id, runs, change, saveOutputs]);
  const { running } = useSyncExternalStore(runs.subscribe, () => runs.view);
  const runningOwner = running ? runs.cell(running).owner : null;
  const startedAt = useSyncExternalStore(
    (listener) => runningOwner?.subscribe(listener) ?? (() => undefined),
    () => runningOwner?.current.startedAt ?? 0,
  );

  // The variables saved after the last run that ended ok come back once per page.
  useEffect(() => {
    if (!here || !session) return;
    let cancelled = false;
    void restoreVariables({
      session,
      id,
      restored: restoredOnThisPage,
      what: "notebook",
      load: () => loadNotebookState(id),
      save: (snapshot) => saveVariables(id, snapshot),
      say: (text) => !cancelled && setNotice(text),
    });
    return () => {
      cancelled = true;
    };
  }, [here, session, id]);

  /** Adds a cell after the one focused last (else at the end), and moves focus into it. */
  const addCell = useCallback(
    (kind: CellKind, after = lastFocused.current) => {
      const cell = newCell(kind);
      if (kind === "markdown") runs.cell(cell.id).set({ editing: true });
      change((notebook) => insertCell(notebook, cell, after));
      focusCell(cell.id);
    },
    [change, runs, focusCell],
  );

  const actions = useMemo<CellActions>(
    () => ({
      edit: (cellId, source) => change((notebook) => editSource(notebook, cellId, source)),
      run: (cellId, advance, target = "") => {
        const cells = current.current?.cells ?? [];
        const index = cells.findIndex((cell) => cell.id === cellId);
        const cell = cells[index];
        if (!cell) return;
        if (cell.kind === "code") runs.enqueue([cellId], target);
        if (cell.kind === "markdown") runs.cell(cellId).set({ editing: false });
        if (!advance) return;
        const next = cells[index + 1];
        if (next) focusCell(next.id);
        else addCell("code", cellId);
      },
      remove: (cellId) => {
        runs.forget(cellId);
        if (lastFocused.current === cellId) lastFocused.current = null;
        change((notebook) => removeCell(notebook, cellId));
      },
      move: (cellId, by) => change((notebook) => moveCell(notebook, cellId, by)),
      changeKind: (cellId, kind) => {
        const cell = current.current?.cells.find((c) => c.id === cellId);
        if (!cell || cell.kind === kind) return;
        if (cell.kind === "code") {
          // What it showed as code goes with it.
          runs.forget(cellId);
          runs.cell(cellId).owner.show([]);
          void saveOutputs(cellId, []);
        }
        runs.cell(cellId).set({ editing: kind === "markdown", state: "idle", offer: "" });
        change((notebook) => changeKind(notebook, cellId, kind));
        focusCell(cellId);
      },
      focused: (cellId) => {
        lastFocused.current = cellId;
      },
      answer: (cellId, text) => {
        runs.cell(cellId).owner.answered(text);
        if (!answerJupyterInput(scope, text)) live.current.session?.answerInput(text);
      },
    }),
    [change, runs, focusCell, addCell, saveOutputs, scope],
  );

  const runAll = () => {
    const cells = current.current?.cells ?? [];
    for (const cell of cells) if (cell.kind === "markdown") runs.cell(cell.id).set({ editing: false });
    runs.enqueue(cells.filter((cell) => cell.kind === "code").map((cell) => cell.id));
  };
  const restart = async () => {
    if (!session) return;
    runs.stop();
    runs.resetCounter();
    change(clearCounts);
    for (const cell of current.current?.cells ?? []) runs.cell(cell.id).set({ state: "idle" });
    setNotice("");
    // The notebook's kernel on the Jupyter server restarts too, if it has one.
    const restarted = restartJupyterKernel(live.current.settings.jupyter, scope).then((failed) => {
      if (failed) setNotice(`The Jupyter kernel could not be restarted: ${failed}`);
    });
    await Promise.all([session.restart(), restarted]);
    // The variables saved before are not brought back after a reload.
    saveVariables(id, session.savedState);
  };

  const [shownCells, setShownCells] = useState(FIRST_CELLS);
  const allCells = notebook?.cells ?? [];
  useEffect(() => {
    if (shownCells >= allCells.length) return;
    // A transition: React renders the cells in slices, yielding to typing and scrolling between them.
    const timer = setTimeout(() => startTransition(() => setShownCells((shown) => shown + MORE_CELLS)));
    return () => clearTimeout(timer);
  }, [shownCells, allCells.length]);
  const cells = allCells.length > shownCells ? allCells.slice(0, shownCells) : allCells;
  return (
    <div className="notebook" {...drop}>
      <div className="notebook-head">
        <input
          className="notebook-title"
          aria-label="Notebook title"
          value={notebook?.title ?? ""}
          readOnly={readOnly}
          onChange={(event) => {
            const title = event.target.value;
            change((notebook) => ({ ...notebook, title }));
            onTitle(id, title);
          }}
        />
        {jupyterServer(settings.jupyter) && (
          <label className="notebook-kernel">
            Kernel
            <select
              value={usesJupyterKernel(notebook) ? "jupyter" : "browser"}
              disabled={readOnly || !notebook}
              onChange={(event) => {
                const kernel = event.target.value;
                change((notebook) => ({ ...notebook, metadata: { ...notebook.metadata, [KERNEL_KEY]: kernel } }));
              }}
            >
              <option value="browser">Python in this tab</option>
              <option value="jupyter">Jupyter server</option>
            </select>
          </label>
        )}
        <NotebookFiles current={current} runs={runs} loaded={notebook !== null} filesButton={filesDrawer.button} />
      </div>
      <div className="toolbar notebook-toolbar">
        <button type="button" onClick={runAll} disabled={!session || readOnly || !notebook}>
          Run all
        </button>
        <button type="button" onClick={() => runs.stop()} disabled={!running}>
          Stop
        </button>
        <button type="button" onClick={() => void restart()} disabled={!session || readOnly}>
          Restart
        </button>
        <button type="button" onClick={() => addCell("code")} disabled={readOnly || !notebook}>
          Add code cell
        </button>
        <button type="button" onClick={() => addCell("markdown")} disabled={readOnly || !notebook}>
          Add Markdown cell
        </button>
        <RunStatusLine state={!here && hold !== "waiting" ? FOLLOWING : state} running={running !== null} startedAt={startedAt} />
      </div>
      <NotebookNotices hold={hold} takeOver={takeOver} notice={notice} loadProblem={loadProblem} saveProblem={saveProblem} />
      <div className="cells">
        {cells.map((cell, index) => (
          <Cell
            key={cell.id}
            cell={cell}
            index={index}
            last={index === allCells.length - 1}
            runs={runs}
            readOnly={readOnly}
            focusSeq={focusRequest?.id === cell.id ? focusRequest.seq : 0}
            actions={actions}
          />
        ))}
      </div>
      <div {...filesDrawer.panel}>
        <FilesPanel files={files} state={filesState} />
      </div>
      {filesDrawer.backdrop}
    </div>
  );
}
