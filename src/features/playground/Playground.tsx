import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { CodeEditor } from "../../components/CodeEditor";
import { OutputView } from "../../components/OutputView";
import { applyEvent, applyResult, answerInput, type OutputItem } from "../../runtime/output-model";
import { runCode } from "../../runtime/run-code";
import { sandboxAccess } from "../../storage/sandboxes";
import { sessionConfig } from "../../runtime/session-config";
import { usePythonSession } from "../../runtime/use-python-session";
import { loadPlayground, savePlayground } from "../../storage/playground";
import { useSettings } from "../settings/settings-context";
import { FilesPanel } from "../files/FilesPanel";
import { fileDropTarget, useSessionFiles } from "../files/use-session-files";
import { RunStatusLine } from "./RunStatusLine";

const WELCOME = `# Python in your browser tab: no key, no install.
name = "Kiln"
print(f"Hello from {name}!")
sum(i * i for i in range(10))
`;

/** Write and run Python with no API key. Code and output survive a reload. */
export function Playground() {
  const { settings, loaded } = useSettings();
  const config = useMemo(() => (loaded ? sessionConfig(settings, { allowInput: true, network: true }) : null), [loaded, settings]);
  const { session, state } = usePythonSession("playground", config);
  const { files, state: filesState } = useSessionFiles("playground", session);
  const [code, setCode] = useState<string | null>(null);
  const [outputs, setOutputs] = useState<OutputItem[]>([]);
  const [running, setRunning] = useState(false);
  const [startedAt, setStartedAt] = useState(0);
  const [finishedRuns, setFinishedRuns] = useState(0);
  /** Code whose run ended `unavailable` in the browser, which Anthropic's sandbox could run. */
  const [offerSandbox, setOfferSandbox] = useState<string | null>(null);
  /** Stops a run that is waiting for Anthropic's sandbox. */
  const stopSandbox = useRef<() => void>(undefined);

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

  const run = useCallback(
    async (onSandbox = false) => {
      if (!session || !config || running || code === null) return;
      const source = code;
      setRunning(true);
      setOfferSandbox(null);
      setStartedAt(performance.now());
      let items: OutputItem[] = [];
      setOutputs(items);
      const controller = new AbortController();
      stopSandbox.current = () => controller.abort();
      // The person's own code leaves the browser only when they press "Run on Anthropic".
      const result = await runCode(source, {
        session,
        backend: settings.backend,
        sandbox: sandboxAccess(settings, "playground"),
        askFirst: true,
        forceSandbox: onSandbox,
        deadlineMs: config.timeoutMs,
        signal: controller.signal,
        onEvent: (event) => {
          items = applyEvent(items, event);
          setOutputs(items);
        },
      });
      stopSandbox.current = undefined;
      await files?.sync();
      items = applyResult(items, result);
      setOutputs(items);
      setRunning(false);
      setFinishedRuns((count) => count + 1);
      if (result.status === "unavailable" && !result.sandbox && settings.apiKey) setOfferSandbox(source);
      void persist(source, items);
    },
    [session, files, config, running, code, settings],
  );

  const onAnswer = useCallback(
    (text: string) => {
      setOutputs((items) => answerInput(items, text));
      session?.answerInput(text);
    },
    [session],
  );

  return (
    <main className="playground" {...fileDropTarget(files)}>
      <div className="toolbar">
        <button type="button" onClick={() => void run()} disabled={!session || running || code === null}>
          Run
        </button>
        <button
          type="button"
          onClick={() => {
            stopSandbox.current?.();
            session?.interrupt();
          }}
          disabled={!running}
        >
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
        {offerSandbox !== null && offerSandbox === code && (
          <p className="notice notice-info">
            This code needs a library that only Anthropic's sandbox has. Running it there sends the code and the files
            it names to Anthropic.
            <button type="button" onClick={() => void run(true)}>
              Run on Anthropic
            </button>
          </p>
        )}
      </section>
      <FilesPanel files={files} state={filesState} />
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
