import { useCallback, useEffect, useMemo, useState } from "react";
import { CodeEditor } from "../../components/CodeEditor";
import { OutputView } from "../../components/OutputView";
import { applyEvent, applyResult, answerInput, type OutputItem } from "../../runtime/output-model";
import { sessionConfig } from "../../runtime/session-config";
import { usePythonSession } from "../../runtime/use-python-session";
import { loadPlayground, savePlayground } from "../../storage/playground";
import { useSettings } from "../settings/settings-context";
import { RunStatusLine } from "./RunStatusLine";

const WELCOME = `# Python in your browser tab: no key, no install.
name = "Kiln"
print(f"Hello from {name}!")
sum(i * i for i in range(10))
`;

/** Write and run Python with no API key. Code and output survive a reload. */
export function Playground() {
  const { settings, loaded } = useSettings();
  const config = useMemo(() => (loaded ? sessionConfig(settings, true) : null), [loaded, settings]);
  const { session, state } = usePythonSession("playground", config);
  const [code, setCode] = useState<string | null>(null);
  const [outputs, setOutputs] = useState<OutputItem[]>([]);
  const [running, setRunning] = useState(false);
  const [startedAt, setStartedAt] = useState(0);
  const [finishedRuns, setFinishedRuns] = useState(0);

  useEffect(() => {
    loadPlayground()
      .then((record) => {
        setCode(record?.code ?? WELCOME);
        setOutputs(record?.outputs ?? []);
      })
      .catch(() => setCode(WELCOME));
  }, []);

  // Save shortly after each edit (a run saves its outcome as soon as it ends).
  useEffect(() => {
    if (code === null || running) return;
    const timer = setTimeout(() => void persist(code, outputs), 250);
    return () => clearTimeout(timer);
  }, [code, outputs, running]);

  const run = useCallback(async () => {
    if (!session || running || code === null) return;
    const source = code;
    setRunning(true);
    setStartedAt(performance.now());
    let items: OutputItem[] = [];
    setOutputs(items);
    const result = await session.run(source, {
      onEvent: (event) => {
        items = applyEvent(items, event);
        setOutputs(items);
      },
    });
    items = applyResult(items, result);
    setOutputs(items);
    setRunning(false);
    setFinishedRuns((count) => count + 1);
    void persist(source, items);
  }, [session, running, code]);

  const onAnswer = useCallback(
    (text: string) => {
      setOutputs((items) => answerInput(items, text));
      session?.answerInput(text);
    },
    [session],
  );

  return (
    <main className="playground">
      <div className="toolbar">
        <button type="button" onClick={() => void run()} disabled={!session || running || code === null}>
          Run
        </button>
        <button type="button" onClick={() => session?.interrupt()} disabled={!running}>
          Stop
        </button>
        <button
          type="button"
          onClick={() => {
            setOutputs([]);
            void session?.restart();
          }}
          disabled={!session}
        >
          Restart
        </button>
        <RunStatusLine state={state} running={running} startedAt={startedAt} />
      </div>
      {code !== null && <CodeEditor value={code} onChange={setCode} onRun={() => void run()} />}
      <section className="output" aria-label="Output" aria-busy={running} data-finished-runs={finishedRuns}>
        <OutputView items={outputs} onAnswer={running ? onAnswer : undefined} />
      </section>
    </main>
  );
}

async function persist(code: string, outputs: OutputItem[]): Promise<void> {
  try {
    await savePlayground({ code, outputs, updatedAt: Date.now() });
  } catch (error) {
    console.error("Could not save the playground.", error);
  }
}
