import { useState, useSyncExternalStore } from "react";
import { CodeEditor } from "../components/CodeEditor";
import { OutputView } from "../components/OutputView";
import { RunStatusLine } from "../features/playground/RunStatusLine";
import type { EmbedController } from "./controller";

/** What a cell of a page shows beyond a widget (see cell-config.ts). */
export interface CellExtras {
  hideCode: boolean;
  hint: string;
  solution: string;
  hasCheck: boolean;
}

/** The embedded widget: Run and Stop, the code (editable unless read-only), the output. */
export function Widget({ controller, readOnly, cell }: { controller: EmbedController; readOnly: boolean; cell?: CellExtras }) {
  const view = useSyncExternalStore(
    (listener) => controller.subscribe(listener),
    () => controller.current,
  );
  const [hintShown, setHintShown] = useState(false);
  const ready = view.session?.kind === "ready" || view.session?.kind === "running";
  // A cell may be run while its session starts or runs another cell's code: its run waits its turn.
  const runnable = cell ? !view.running : ready && !view.running;
  let status;
  if (view.waitingFor !== undefined) status = <span role="status" className="status">Waiting for cell {view.waitingFor}…</span>;
  else if (view.session) status = <RunStatusLine state={view.session} running={view.running} startedAt={view.startedAt} />;
  else status = <span role="status" className="status">Python starts when you press Run</span>;
  return (
    <main className="embed">
      <div className="toolbar">
        <button type="button" onClick={() => controller.run()} disabled={!runnable}>
          Run
        </button>
        <button type="button" onClick={() => controller.stop()} disabled={!view.running && !view.sessionBusy}>
          Stop
        </button>
        {cell?.hint ? (
          <button type="button" onClick={() => setHintShown(true)} disabled={hintShown}>
            Show hint
          </button>
        ) : null}
        {cell?.solution ? (
          <button type="button" onClick={() => controller.setCode(cell.solution)} disabled={readOnly}>
            Show solution
          </button>
        ) : null}
        {status}
      </div>
      {hintShown && cell?.hint ? (
        <p className="embed-hint" aria-label="Hint">
          {cell.hint}
        </p>
      ) : null}
      {cell?.hideCode ? null : (
        <CodeEditor
          value={view.code}
          onChange={(code) => controller.setCode(code)}
          onRun={() => controller.run()}
          readOnly={readOnly}
        />
      )}
      <section className="output" aria-label="Output" aria-busy={view.running} data-finished-runs={view.finishedRuns}>
        <OutputView items={view.outputs} onAnswer={view.running ? (text) => controller.answerInput(text) : undefined} />
      </section>
      {cell?.hasCheck ? (
        <p role="status" aria-label="Check" className={`embed-check ${view.check ? (view.check.passed ? "passed" : "failed") : ""}`}>
          {view.check?.message ?? "Not checked yet"}
        </p>
      ) : null}
      <p className="embed-footer">
        Python runs in this page with{" "}
        <a href="https://pyodide.org" target="_blank" rel="noreferrer">
          Pyodide
        </a>{" "}
        · Kiln
      </p>
    </main>
  );
}
