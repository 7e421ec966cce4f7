import { useSyncExternalStore } from "react";
import { CodeEditor } from "../components/CodeEditor";
import { OutputView } from "../components/OutputView";
import { RunStatusLine } from "../features/playground/RunStatusLine";
import type { EmbedController } from "./controller";

/** The embedded widget: Run and Stop, the code (editable unless read-only), the output. */
export function Widget({ controller, readOnly }: { controller: EmbedController; readOnly: boolean }) {
  const view = useSyncExternalStore(
    (listener) => controller.subscribe(listener),
    () => controller.current,
  );
  const ready = view.session.kind === "ready" || view.session.kind === "running";
  return (
    <main className="embed">
      <div className="toolbar">
        <button type="button" onClick={() => controller.run()} disabled={!ready || view.running}>
          Run
        </button>
        <button type="button" onClick={() => controller.stop()} disabled={!view.running}>
          Stop
        </button>
        <RunStatusLine state={view.session} running={view.running} startedAt={view.startedAt} />
      </div>
      <CodeEditor
        value={view.code}
        onChange={(code) => controller.setCode(code)}
        onRun={() => controller.run()}
        readOnly={readOnly}
      />
      <section className="output" aria-label="Output" aria-busy={view.running} data-finished-runs={view.finishedRuns}>
        <OutputView items={view.outputs} onAnswer={view.running ? (text) => controller.answerInput(text) : undefined} />
      </section>
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
