import { memo, useEffect, useRef, useSyncExternalStore, type KeyboardEvent } from "react";
import { SpreadMarkdown } from "../../components/Markdown";
import { OutputView } from "../../components/OutputView";
import type { CellKind, NotebookCell } from "../../notebook/model";
import type { NotebookRuns, RunTarget } from "./notebook-runs";
import { LazyCodeEditor } from "./LazyCodeEditor";

/** What a cell asks of its notebook; one object for every cell, made once per notebook. */
export interface CellActions {
  edit(id: string, source: string): void;
  /** Run (a Markdown cell: render) cell `id`; `advance`: then move to the next cell, adding one at the end. */
  run(id: string, advance: boolean, target?: RunTarget): void;
  remove(id: string): void;
  move(id: string, by: -1 | 1): void;
  changeKind(id: string, kind: CellKind): void;
  focused(id: string): void;
  answer(id: string, text: string): void;
}

interface Props {
  cell: NotebookCell;
  index: number;
  last: boolean;
  runs: NotebookRuns;
  readOnly: boolean;
  /** Changes when focus should move into this cell. */
  focusSeq: number;
  actions: CellActions;
}

const STATE_TEXT = { idle: "", queued: "queued", running: "running", done: "done", failed: "failed" } as const;

/** Moves focus into a cell: its code, its Markdown box or rendered text. */
function focusIn(cell: HTMLElement | null) {
  cell?.querySelector<HTMLElement>('[aria-label="Python code"], [aria-label="Markdown"], .cell-markdown-view, .cell-raw')?.focus();
}

/** One notebook cell: a region "Cell N" with its buttons, code or Markdown, and output. */
export const Cell = memo(function Cell({ cell, index, last, runs, readOnly, focusSeq, actions }: Props) {
  const cellRuns = runs.cell(cell.id, cell.outputs);
  const view = useSyncExternalStore(cellRuns.subscribe, () => cellRuns.view);
  const box = useRef<HTMLElement>(null);
  const { id, kind } = cell;
  useEffect(() => {
    if (focusSeq) focusIn(box.current);
  }, [focusSeq]);
  const state = kind === "code" ? view.state : "idle";
  const editing = kind === "markdown" && view.editing && !readOnly;
  const count = state === "queued" || state === "running" ? "*" : (cell.executionCount ?? " ");
  const startEditing = () => !readOnly && cellRuns.set({ editing: true });
  const keys = (event: KeyboardEvent) => {
    if (event.key !== "Enter" || !(event.shiftKey || event.ctrlKey || event.metaKey)) return;
    event.preventDefault();
    actions.run(id, event.shiftKey);
  };
  return (
    <section
      ref={box}
      className={`cell cell-${kind} cell-${state}`}
      aria-label={`Cell ${index + 1}`}
      data-state={state}
      onFocus={() => actions.focused(id)}
    >
      <div className="cell-bar">
        {kind === "code" && <span className="cell-count">[{count}]</span>}
        {STATE_TEXT[state] && <span className="cell-state">{STATE_TEXT[state]}</span>}
        <select aria-label="Cell type" value={kind} disabled={readOnly} onChange={(event) => actions.changeKind(id, event.target.value as CellKind)}>
          <option value="code">Code</option>
          <option value="markdown">Markdown</option>
          <option value="raw">Raw</option>
        </select>
        <span className="cell-buttons">
          {kind === "markdown" && !editing && (
            <button type="button" className="icon-button" disabled={readOnly} onClick={startEditing}>
              Edit
            </button>
          )}
          <button type="button" className="icon-button" aria-label="Run cell" title="Run cell (Shift+Enter)" disabled={readOnly || kind === "raw"} onClick={() => actions.run(id, false)}>
            ▶
          </button>
          <button type="button" className="icon-button" aria-label="Move cell up" title="Move cell up" disabled={readOnly || index === 0} onClick={() => actions.move(id, -1)}>
            ↑
          </button>
          <button type="button" className="icon-button" aria-label="Move cell down" title="Move cell down" disabled={readOnly || last} onClick={() => actions.move(id, 1)}>
            ↓
          </button>
          <button type="button" className="icon-button" aria-label="Delete cell" title="Delete cell" disabled={readOnly} onClick={() => actions.remove(id)}>
            ×
          </button>
        </span>
      </div>
      {kind === "code" ? (
        <>
          <LazyCodeEditor
            value={cell.source}
            onChange={(source) => actions.edit(id, source)}
            onRun={() => actions.run(id, false)}
            onRunAndAdvance={() => actions.run(id, true)}
            readOnly={readOnly}
            focusNow={focusSeq > 0}
          />
          <CellOutput runs={runs} id={id} source={cell.source} readOnly={readOnly} actions={actions} />
        </>
      ) : kind === "markdown" ? (
        editing ? (
          <textarea
            className="cell-markdown-source"
            aria-label="Markdown"
            autoFocus
            value={cell.source}
            rows={Math.min(20, Math.max(3, cell.source.split("\n").length + 1))}
            onChange={(event) => actions.edit(id, event.target.value)}
            onKeyDown={keys}
          />
        ) : (
          <div
            className="cell-markdown-view"
            tabIndex={0}
            title={readOnly ? undefined : "Double-click or press Enter to edit"}
            onDoubleClick={startEditing}
            onKeyDown={(event) => {
              if (event.key === "Enter" && !event.shiftKey && !event.ctrlKey && !event.metaKey) {
                event.preventDefault();
                startEditing();
              } else keys(event);
            }}
          >
            {cell.source.trim() ? <SpreadMarkdown source={cell.source} /> : <p className="cell-empty">Empty Markdown cell: double-click to write in it.</p>}
          </div>
        )
      ) : (
        <pre className="cell-raw" tabIndex={0}>
          {cell.source}
        </pre>
      )}
    </section>
  );
});

/** A code cell's output, the sandbox offer, and the input() prompt while it runs. */
function CellOutput({ runs, id, source, readOnly, actions }: { runs: NotebookRuns; id: string; source: string; readOnly: boolean; actions: CellActions }) {
  const cellRuns = runs.cell(id);
  const { outputs, running, finishedRuns } = useSyncExternalStore(cellRuns.owner.subscribe, () => cellRuns.owner.current);
  const { offer, offerJupyter, offerFor } = useSyncExternalStore(cellRuns.subscribe, () => cellRuns.view);
  return (
    <section className="output" aria-label="Output" aria-busy={running} data-finished-runs={finishedRuns}>
      <OutputView items={outputs} onAnswer={running && !readOnly ? (text) => actions.answer(id, text) : undefined} />
      {offer && offerFor === source && (
        <p className="notice notice-info">
          This code needs a library that only {offer}'s sandbox has. Running it there sends the code and the files it names to {offer}.
          <button type="button" disabled={readOnly} onClick={() => actions.run(id, false, "sandbox")}>
            Run on {offer}
          </button>
        </p>
      )}
      {offerJupyter && offerFor === source && (
        <p className="notice notice-info">
          This code needs a library the browser does not have. Running it on your Jupyter server sends the code and this notebook's files to it.
          <button type="button" disabled={readOnly} onClick={() => actions.run(id, false, "jupyter")}>
            Run on Jupyter server
          </button>
        </p>
      )}
    </section>
  );
}
