import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { CodeEditor } from "../../components/CodeEditor";
import { OutputView } from "../../components/OutputView";
import type { OutputItem } from "../../model/output";
import { runCode } from "../../execution/run-code";
import { noSandboxReason, sandboxChoice, sandboxProvider } from "../../providers";
import { RunOwner } from "../../runtime/run-owner";
import { sessionConfig } from "../../runtime/session-config";
import { usePythonSession } from "../../runtime/use-python-session";
import { saveCellOutputs, saveNotebook } from "../../storage/notebooks";
import { readNotebook, readNotebookList } from "../../storage/read-off-thread";
import type { Notebook } from "../../notebook/model";
import { WELCOME_CODE as WELCOME, welcomeNotebook } from "../../notebook/welcome";
import { storageFailure } from "../../storage/db";
import { useSettings } from "../settings/settings-context";
import { FilesPanel } from "../files/FilesPanel";
import { fileDropTarget, useSessionFiles } from "../files/use-session-files";
import { RunStatusLine } from "./RunStatusLine";

/** Tabs tell each other the Playground code they saved, which the others show (see `follow` below). */
const codeChannel = typeof BroadcastChannel === "function" ? new BroadcastChannel("kiln-playground") : undefined;

/** Write and run Python with no API key. Code and output survive a reload. */
export function Playground() {
  const { settings, loaded } = useSettings();
  const config = useMemo(() => (loaded ? sessionConfig(settings, { allowInput: true, network: true }) : null), [loaded, settings]);
  const { session, state } = usePythonSession("playground", config);
  const { files, state: filesState } = useSessionFiles("playground", session);
  const [code, setCode] = useState<string | null>(null);
  const owner = useMemo(() => new RunOwner(), []);
  const { outputs, running, startedAt, finishedRuns } = useSyncExternalStore(owner.subscribe, () => owner.current);
  /** Code whose run ended `unavailable` in the browser, which the provider's sandbox could run. */
  const [offerSandbox, setOfferSandbox] = useState<{ code: string; provider: string } | null>(null);
  /**
   * The code and output saved last (or loaded): a run's end and the save after an edit both
   * ask to save, and megabytes of output that did not change are not written again.
   */
  const saved = useRef<{ code: string; outputs: readonly OutputItem[] } | null>(null);
  /** Why the last save failed (a full disk), until one succeeds. */
  const [saveProblem, setSaveProblem] = useState("");
  /** Why the saved code could not be read, until this tab saves its own. */
  const [loadProblem, setLoadProblem] = useState("");
  /** The code in the editor now (set with each edit, before React renders it). */
  const codeNow = useRef<string | null>(null);
  /** Saves under way: code another tab saved meanwhile is followed, and saved again from here once they end. */
  const saving = useRef(0);
  const save = useCallback((source: string, shown: readonly OutputItem[]) => {
    if (saved.current?.code === source && saved.current.outputs === shown) return;
    saved.current = { code: source, outputs: shown };
    saving.current += 1;
    void persist(source, shown).then((problem) => {
      saving.current -= 1;
      // Not saved: the next save of the same code and outputs is not skipped.
      if (problem && saved.current?.code === source) saved.current = null;
      // Other tabs follow only the code shown here now (a run's end saves the code it ran, which may be older).
      if (!problem && codeNow.current === source) codeChannel?.postMessage({ code: source });
      if (!problem) setLoadProblem("");
      setSaveProblem(problem);
    });
  }, []);

  // While the code is not saved, closing or reloading the page asks first (the browser's own "Leave site?").
  useEffect(() => {
    if (!saveProblem) return;
    const askFirst = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", askFirst);
    return () => window.removeEventListener("beforeunload", askFirst);
  }, [saveProblem]);

  // Code another tab saved is shown here too, unless this tab has an edit of its own not saved
  // yet (that edit is saved next, and the other tab follows it in turn). Each tab keeps its own
  // output, from its own Python; the code followed is not saved again from here.
  const edit = useCallback((next: string) => {
    codeNow.current = next;
    setCode(next);
  }, []);
  useEffect(() => {
    const follow = (event: MessageEvent<{ code?: unknown }>) => {
      const next = event.data?.code;
      if (typeof next !== "string" || codeNow.current === null || codeNow.current !== saved.current?.code) return;
      // A save of this tab's still under way lands after the other tab's: this code is saved again after it.
      saved.current = saving.current ? null : { code: next, outputs: owner.current.outputs };
      edit(next);
    };
    codeChannel?.addEventListener("message", follow);
    return () => codeChannel?.removeEventListener("message", follow);
  }, [owner, edit]);

  useEffect(() => {
    readNotebookList(welcomeNotebook)
      .then((list) => readNotebook(list[0].id))
      .then((notebook) => {
        opened = notebook;
        const cell = notebook?.cells.find((each) => each.kind === "code");
        const outputs = cell?.outputs ?? [];
        if (cell) saved.current = { code: cell.source, outputs };
        edit(cell?.source ?? WELCOME);
        owner.show(outputs);
      })
      .catch((error: unknown) => {
        // What is stored stays: the example shown is not saved over it until the person edits or runs code here.
        saved.current = { code: WELCOME, outputs: owner.current.outputs };
        setLoadProblem(storageFailure(error));
        edit(WELCOME);
      });
  }, [owner, edit]);

  // Save shortly after each edit (a run saves its outcome as soon as it ends; an edit during a
  // run is saved with the outputs saved before it).
  useEffect(() => {
    if (code === null) return;
    const timer = setTimeout(() => save(code, running ? (saved.current?.outputs ?? []) : outputs), 250);
    return () => clearTimeout(timer);
  }, [code, outputs, running, save]);

  const run = useCallback(
    async (onSandbox = false) => {
      if (!session || !config || running || code === null) return;
      const source = code;
      setOfferSandbox(null);
      const sandbox = sandboxChoice(sandboxProvider(settings, "playground"));
      // The person's own code leaves the browser only when they press "Run on <provider>".
      const { outcome, outputs: shown } = await owner.run((signal, onEvent) =>
        runCode(source, {
          session,
          backend: settings.backend,
          sandbox,
          noSandbox: noSandboxReason(),
          askFirst: true,
          forceSandbox: onSandbox,
          deadlineMs: config.timeoutMs,
          signal,
          onEvent,
        }),
      );
      // Saved as soon as the run ends, before the file list is brought up to date.
      save(source, shown);
      await files?.sync();
      if (outcome.status === "unavailable" && !outcome.ranOn && sandbox) setOfferSandbox({ code: source, provider: sandbox.provider });
    },
    [session, files, config, running, code, settings, owner, save],
  );

  const onAnswer = useCallback(
    (text: string) => {
      owner.answered(text);
      session?.answerInput(text);
    },
    [session, owner],
  );

  return (
    <main className="playground" {...fileDropTarget(files)}>
      <div className="toolbar">
        <button type="button" onClick={() => void run()} disabled={!session || running || code === null}>
          Run
        </button>
        <button type="button" onClick={() => owner.stop()} disabled={!running}>
          Stop
        </button>
        <button
          type="button"
          onClick={() => {
            owner.show([]);
            void session?.restart();
          }}
          disabled={!session}
        >
          Restart
        </button>
        <RunStatusLine state={state} running={running} startedAt={startedAt} />
      </div>
      {code !== null && <CodeEditor value={code} onChange={edit} onRun={() => void run()} />}
      {loadProblem && (
        <p className="notice notice-warning" role="alert">
          Your saved code could not be read from the browser's storage ({loadProblem}), so the example is shown. What is
          stored stays until you edit or run code here; a reload tries to read it again.
        </p>
      )}
      {saveProblem && (
        <p className="notice notice-warning" role="alert">
          Your code could not be saved, so a reload would lose it ({saveProblem}). Free some space in the browser's storage; it
          is saved again at your next edit.
        </p>
      )}
      <section className="output" aria-label="Output" aria-busy={running} data-finished-runs={finishedRuns}>
        <OutputView items={outputs} onAnswer={running ? onAnswer : undefined} />
        {offerSandbox !== null && offerSandbox.code === code && (
          <p className="notice notice-info">
            This code needs a library that only {offerSandbox.provider}'s sandbox has. Running it there sends the code and
            the files it names to {offerSandbox.provider}.
            <button type="button" onClick={() => void run(true)}>
              Run on {offerSandbox.provider}
            </button>
          </p>
        )}
      </section>
      <FilesPanel files={files} state={filesState} />
    </main>
  );
}

/** The notebook whose first code cell this page shows. */
let opened: Notebook | undefined;

/** Saves the Playground; resolves with why it could not, or "" once saved. */
async function persist(code: string, outputs: readonly OutputItem[]): Promise<string> {
  try {
    const cell = opened?.cells.find((each) => each.kind === "code");
    if (!opened || !cell) return "";
    opened = { ...opened, updatedAt: Date.now(), cells: opened.cells.map((each) => (each === cell ? { ...cell, source: code } : each)) };
    await saveNotebook(opened);
    await saveCellOutputs(opened.id, cell.id, outputs);
    return "";
  } catch (error) {
    console.error("Could not save the playground.", error);
    return storageFailure(error);
  }
}
