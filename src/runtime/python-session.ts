import { capError } from "../../workers/text-limits";
import type {
  FileBytes,
  FileData,
  FileInfo,
  ImportReport,
  RestoreReport,
  RunResult,
  RuntimeInfo,
  PostedEvent,
  SessionSnapshot,
  WorkerEvent,
  WorkerRunOutcome,
} from "../../workers/python-api";
import { FLOODED, type WorkerHandle } from "./python-worker";
import type { SessionConfig } from "./session-config";
import { takeWorker, warmSpare, warmSpareLater } from "./spares";
import { emptySnapshot, merged, without } from "./session-state";
import { watchStop, type StoppedRun } from "./stop-watch";
import { watchCall } from "./call-watch";
import { RunIntake } from "./run-intake";
import { WorkerPrep, type WorkerSetup } from "./worker-prep";

/** After a replacement, the next spare waits this long, so the restore and the next run go first. */
const SPARE_AFTER_RECOVERY_MS = 250;
/** A session that keeps no spare until its first run starts it this long after that run has ended. */
const SPARE_AFTER_RUN_MS = 250;
/** Workers lost in a row (crashes with no good run between) before the saved state is given up. */
const MAX_LOSSES_BEFORE_RESET = 2;
/** The characters of a line of progress kept (the status line shows one line). */
const PROGRESS_CHARS = 160;
/**
 * How long a call other than a run (see call-watch.ts) may go unanswered, at most: the run
 * deadline, when that is shorter.
 */
const CALL_LIMIT_MS = 60_000;
/** Reading a cell's imports takes milliseconds: a worker silent this long is stuck. */
const IMPORTS_LIMIT_MS = 10_000;

/** One owner for the session's state, so the status line and errors cannot drift apart. */
export type SessionState =
  | { kind: "loading"; message: string }
  | { kind: "ready"; info: RuntimeInfo }
  | { kind: "running"; info: RuntimeInfo; message?: string }
  | { kind: "error"; message: string };

export interface RunHandlers {
  onEvent?: (event: WorkerEvent) => void;
  /** Overrides the session's deadline for this run (ms; 0 disables). */
  timeoutMs?: number;
  /** Stop: aborting it interrupts the run, also one still waiting its turn (then it never starts). */
  signal?: AbortSignal;
}

interface ActiveRun extends StoppedRun {
  id: number;
  /** A Restart ended it: its variables are gone, whatever Python answers. */
  restarted?: boolean;
  handlers: RunHandlers;
  /** Called on the worker's "done" event: every event of the run has arrived. */
  drained: () => void;
  intake: RunIntake;
}

/**
 * A Python interpreter on the page's side, one run at a time. State persists between runs
 * and never leaks into another session. A runaway run is interrupted; if Python does not
 * stop, or its worker dies, a warm spare takes over and the state of the last successful
 * run is restored into it.
 */
export class PythonSession {
  private current: WorkerHandle;
  private state: SessionState = { kind: "loading", message: "Starting Python…" };
  private readonly listeners = new Set<(state: SessionState) => void>();
  private queue: Promise<unknown> = Promise.resolve();
  private active: ActiveRun | undefined;
  private snapshot = emptySnapshot();
  private runs = 0;
  /** Workers lost since the last run that ended well: state that kills every worker is not brought back again. */
  private lossesInRow = 0;
  private disposed = false;
  /** The last worker that died while idle, and its replacement's restore (which never fails). */
  private recovering: { from: WorkerHandle; report: Promise<RestoreReport> } | undefined;
  private readonly prep = new WorkerPrep();

  /**
   * `runWaits`: the session starts because a run is waiting for it. Its first worker then makes
   * no start-up snapshot, which would hold that run's output up: the spare, started once the run
   * has ended, makes it (see boot-snapshot.ts).
   */
  constructor(
    private config: SessionConfig,
    { runWaits = false }: { runWaits?: boolean } = {},
  ) {
    this.current = this.adopt(takeWorker(config, { mayMakeSnapshot: !runWaits }), "Loading Python…");
  }

  get currentState(): SessionState {
    return this.state;
  }

  /** Resolves when Python is ready (rejects if it could not start). */
  get ready(): Promise<RuntimeInfo> {
    return this.prep.ready(this.current);
  }

  /**
   * Work every worker of this session needs before it runs anything, now and after each
   * restart or replacement (a failure is logged, never fatal).
   */
  setWorkerSetup(setup: WorkerSetup): void {
    this.prep.use(setup, this.current);
  }

  subscribe(listener: (state: SessionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Settings take effect for the next run; package settings at the next restart. A change
   * of network permission takes a new worker at once (its frame's policy is fixed), with the
   * state of the last successful run restored.
   */
  configure(config: SessionConfig): void {
    const networkChanged = config.network !== this.config.network;
    this.config = config;
    if (networkChanged && !this.disposed) void this.enqueue(() => this.recover("Switching Python's network access…"));
  }

  /**
   * Run code after any run already queued. A Stop while it waits its turn ends it at once
   * ("Stopped before it started"): it does not wait for what is ahead of it.
   */
  run(code: string, handlers: RunHandlers = {}): Promise<RunResult> {
    let started = false;
    const result = this.enqueue(() => {
      started = true;
      return this.execute(code, handlers);
    });
    const signal = handlers.signal;
    if (!signal) return result;
    const queued = performance.now();
    return new Promise<RunResult>((resolve, reject) => {
      const stopWaiting = () => {
        if (!started) resolve(stoppedBeforeStart(queued));
      };
      signal.addEventListener("abort", stopWaiting, { once: true });
      result.then(resolve, reject).finally(() => signal.removeEventListener("abort", stopWaiting));
    });
  }

  /** `task` after everything already queued (runs, restores, writes); a failure holds up nothing after it. */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** `call` on the current worker, once it is ready, watched by {@link answered}. */
  private async whenCurrentReady<T>(call: (api: WorkerHandle["api"]) => Promise<T>, what: string, limitMs = CALL_LIMIT_MS, signal?: AbortSignal): Promise<T> {
    await this.ready;
    const worker = this.current;
    return (await this.answered(worker, what, call(worker.api), limitMs, signal)).value;
  }

  /** `call` to `worker`, watched (see {@link watchCall}) against the shorter of `limitMs` and the run deadline. */
  private answered<T>(worker: WorkerHandle, what: string, call: Promise<T>, limitMs: number, signal?: AbortSignal) {
    const runOn = () => this.active !== undefined && this.current === worker;
    return watchCall(worker, call, { limitMs: Math.min(limitMs, this.config.timeoutMs || limitMs), what, runOn, signal });
  }

  /**
   * Stop the running code: KeyboardInterrupt first (variables survive); if Python has not
   * stopped in time (see {@link watchStop}), its worker is replaced and state restored.
   */
  interrupt(reason: "stop" | "deadline" = "stop"): void {
    const run = this.active;
    if (!run || run.stopReason) return;
    run.stopReason = reason;
    const worker = this.current;
    worker.interrupt();
    // A run waiting in `await` is cancelled, once SIGINT is set (the answer comes after it, on the
    // same channel): a SIGINT arriving after the cancel could land between two steps of the
    // cancelled task, and its next step would then never run.
    void worker
      .interruptPending()
      .then(() => worker.api.cancel(run.id))
      .then(
        (cancelled) => (run.cancelled ||= cancelled),
        () => undefined,
      );
    watchStop(worker, run, () => this.active === run && this.current === worker, () =>
      worker.terminate("Python did not stop, so its worker was replaced."),
    );
  }

  /** The state a replacement worker (or a reload) would bring back. */
  get savedState(): SessionSnapshot {
    return this.snapshot;
  }

  /** Bring back state saved earlier (after a reload). Returns which names came back. */
  restoreState(snapshot: SessionSnapshot): Promise<RestoreReport> {
    return this.enqueue(async () => {
      await this.ready;
      this.snapshot = snapshot;
      const worker = this.current;
      try {
        return await this.restoreInto(worker);
      } catch (error) {
        // Its worker went away meanwhile: the replacement restores this state, and says what came back.
        if (this.recovering?.from !== worker) throw error;
        return this.recovering.report;
      }
    });
  }

  /**
   * The saved state, brought back into `worker`. Values and definitions whose restore Python
   * had to be interrupted in (unpickling them, or a class body, never ended) are let go: kept,
   * they would hold up every later start the same way.
   */
  private async restoreInto(worker: WorkerHandle): Promise<RestoreReport> {
    const snapshot = this.snapshot;
    const { value: report, interrupted } = await this.answered(worker, "bringing your variables back", worker.api.restore(snapshot), CALL_LIMIT_MS);
    if (interrupted && this.snapshot === snapshot) this.snapshot = without(snapshot, report.lost, report.cells);
    return report;
  }

  /**
   * What `code` imports and which of those this interpreter has (nothing is run). A Stop
   * (`signal`) while the worker has not answered ends the wait as a silence does.
   */
  imports(code: string, signal?: AbortSignal): Promise<ImportReport> {
    return this.whenCurrentReady((api) => api.imports(code), "reading a cell's imports", IMPORTS_LIMIT_MS, signal);
  }

  listFiles(): Promise<FileInfo[]> {
    return this.whenCurrentReady((api) => api.listFiles(), "listing its files");
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.whenCurrentReady((api) => api.readFile(path), "reading a file");
  }

  /**
   * Write (or with `append`, add to) a file in the interpreter, after any run already
   * queued. A relative path is in the working directory.
   */
  writeFile(path: string, data: string | Uint8Array | Blob, append = false): Promise<void> {
    return this.enqueue(() => this.whenCurrentReady((api) => api.writeFile(path, data, append), "writing a file"));
  }

  deleteFile(path: string): Promise<void> {
    return this.whenCurrentReady((api) => api.deleteFile(path), "deleting a file");
  }

  /** Many files' bytes in one call (those that no longer exist are left out); unchecked beyond their shape. */
  readFiles(paths: string[]): Promise<FileBytes[]> {
    return this.whenCurrentReady((api) => api.readFiles(paths), "reading files");
  }

  /** Many files written in one call, after any run already queued. */
  writeFiles(files: readonly FileData[]): Promise<void> {
    return this.enqueue(() => this.whenCurrentReady((api) => api.writeFiles(files), "writing files"));
  }

  deleteFiles(paths: string[]): Promise<void> {
    return this.whenCurrentReady((api) => api.deleteFiles(paths), "deleting files");
  }

  /** Give the person's answer to a waiting `input()`; null cancels it. */
  answerInput(text: string | null): void {
    this.current.answerInput(text);
  }

  /** A fresh interpreter (a warm spare when there is one): every variable is gone. */
  async restart(): Promise<RuntimeInfo> {
    if (this.active) this.active.restarted = true;
    this.interrupt();
    this.snapshot = emptySnapshot();
    this.swap("Restarting Python…");
    return this.ready;
  }

  dispose(): void {
    this.disposed = true;
    this.current.terminate();
    this.listeners.clear();
  }

  private setState(state: SessionState): void {
    if (this.disposed) return;
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }

  /**
   * Make `worker` this session's: route its events, follow its start-up and its death.
   * Once it is ready the next spare starts loading, unless `spare` is "later" (the caller
   * starts it once its own work is done).
   */
  private adopt(worker: WorkerHandle, message: string, spare: "on-ready" | "later" = "on-ready"): WorkerHandle {
    worker.onEvent = (event) => this.onWorkerEvent(worker, event);
    this.setState({ kind: "loading", message });
    this.prep.ready(worker).then(
      (info) => {
        if (this.current !== worker) return;
        if (!this.active) this.setState({ kind: "ready", info });
        if (spare === "on-ready" && this.wantsSpare()) warmSpare(this.config);
      },
      (error: unknown) => {
        if (this.current === worker) this.setState({ kind: "error", message: `Python could not start: ${describe(error)}` });
      },
    );
    // A worker that dies while idle is replaced quietly, its state restored.
    worker.gone.catch(() => {
      if (this.current !== worker || this.active || this.disposed) return;
      this.lossesInRow += 1;
      this.recovering = { from: worker, report: this.recover() };
    });
    return worker;
  }

  private wantsSpare(): boolean {
    return !this.disposed && (this.config.spare !== "on-first-run" || this.runs > 0);
  }

  private swap(message: string, spare?: "later"): WorkerHandle {
    this.current.terminate();
    // Disposed (its conversation deleted): no new worker, which nothing would ever end.
    if (this.disposed) return this.current;
    this.current = this.adopt(takeWorker(this.config), message, spare);
    return this.current;
  }

  /**
   * Replace the worker and bring back the state of the last successful run. State whose
   * restore fails, or that brings down worker after worker, is dropped: a fresh
   * interpreter beats a loop of replacements.
   */
  private async recover(message = "Python stopped; restoring your variables…"): Promise<RestoreReport> {
    if (this.lossesInRow >= MAX_LOSSES_BEFORE_RESET) return this.startAfresh();
    const names = [...this.snapshot.names].sort();
    const worker = this.swap(message, "later");
    try {
      await this.prep.ready(worker);
      const report = await this.restoreInto(worker);
      if (this.current === worker && !this.active) this.setState({ kind: "ready", info: await worker.ready });
      return report;
    } catch {
      // (Its replacement may have let the state go already: what this restore lost is still all of it.)
      return this.current === worker && !this.disposed ? this.startAfresh() : { kept: [], lost: names };
    } finally {
      // The next spare shares the processor with the restore and the run that follows it: it waits.
      warmSpareLater(this.config, SPARE_AFTER_RECOVERY_MS, () => this.wantsSpare());
    }
  }

  /** A fresh interpreter with nothing restored; the saved state is forgotten. */
  private startAfresh(): RestoreReport {
    const lost = [...this.snapshot.names].sort();
    this.snapshot = emptySnapshot();
    this.lossesInRow = 0;
    this.swap("Starting Python afresh: the saved variables could not be brought back…");
    return { kept: [], lost };
  }

  private onWorkerEvent(worker: WorkerHandle, sent: PostedEvent): void {
    if (worker !== this.current) return;
    // A line of progress is shown in a status line, never more of it.
    const event = sent.type === "progress" ? { ...sent, message: sent.message.slice(0, PROGRESS_CHARS) } : sent;
    if (event.type === "progress" && this.state.kind === "running" && this.state.message !== event.message) {
      // Package loading is shown in the status line as well as to the run.
      this.setState({ ...this.state, message: event.message });
    }
    if (event.type === "fatal") worker.terminate(event.message);
    else if (event.type === "done") this.active?.drained();
    else if (this.active && !this.active.intake.take(event)) worker.terminate(FLOODED);
  }

  private async execute(code: string, handlers: RunHandlers): Promise<RunResult> {
    const started = performance.now();
    const worker = this.current;
    let info: RuntimeInfo;
    try {
      info = await this.prep.ready(worker);
    } catch (error) {
      return {
        status: "crashed",
        error: { ename: "RuntimeError", evalue: `Python could not start: ${describe(error)}`, traceback: "" },
        durationMs: performance.now() - started,
      };
    }
    if (handlers.signal?.aborted) return stoppedBeforeStart(started);
    let drained = () => undefined as void;
    // Results come over Comlink, events over their own port: wait for both to be in.
    const allEvents = new Promise<void>((resolve) => (drained = resolve));
    const run: ActiveRun = { id: ++this.runs, handlers, drained, intake: new RunIntake(this.config.outputLimitBytes, handlers.onEvent) };
    this.active = run;
    this.setState({ kind: "running", info });
    const timeoutMs = handlers.timeoutMs ?? this.config.timeoutMs;
    const sent = performance.now();
    const deadline = timeoutMs > 0 ? setTimeout(() => this.interrupt("deadline"), timeoutMs) : undefined;
    const stopped = () => (run.stopReason === "deadline" ? "timeout" : "interrupted");
    const stop = () => this.interrupt();
    handlers.signal?.addEventListener("abort", stop);
    try {
      // Cleared before the run is sent, not in the worker: a Stop pressed from here on counts.
      await worker.clearInterrupt();
      const outcome: WorkerRunOutcome = await Promise.race([
        Promise.all([
          worker.api.run(code, {
            runId: run.id,
            allowInput: this.config.allowInput,
            outputLimitBytes: this.config.outputLimitBytes,
          }),
          allEvents,
        ]).then(([outcome]) => outcome),
        worker.gone,
      ]);
      const { capture } = outcome;
      // The error's text is Python's: cut here whatever the worker did.
      const result = outcome.result.error ? { ...outcome.result, error: capError(outcome.result.error) } : outcome.result;
      const before = this.snapshot.notKept ?? 0;
      if (capture) this.snapshot = merged(this.snapshot, capture);
      const notKept = (this.snapshot.notKept ?? 0) - before;
      if (notKept > 0) result.variablesNotKept = notKept;
      this.lossesInRow = 0;
      if (result.status !== "interrupted") return run.restarted ? { ...result, restarted: true } : result;
      // How long it ran as the page saw it: a run cut by a 2 s deadline never reads "after 1.9 s".
      const durationMs = Math.max(result.durationMs, performance.now() - sent);
      return { ...result, status: stopped(), durationMs, ...(run.restarted && { restarted: true }) };
    } catch (error) {
      // The worker was replaced (hard stop) or died (out of memory, fatal error, exit).
      const status = run.stopReason ? stopped() : "crashed";
      if (status === "crashed") this.lossesInRow += 1;
      const evalue = status === "crashed" ? describe(error) : "Python did not stop in time, so its worker was replaced";
      worker.terminate();
      const result: RunResult = {
        status,
        error: { ename: status === "crashed" ? "WorkerCrash" : "KeyboardInterrupt", evalue, traceback: "" },
        durationMs: performance.now() - started,
      };
      // After a Restart the new worker is already in place, with nothing to restore.
      if (run.restarted) return { ...result, restarted: true };
      return this.current === worker ? { ...result, restored: await this.recover() } : result;
    } finally {
      handlers.signal?.removeEventListener("abort", stop);
      clearTimeout(deadline);
      clearTimeout(run.hardStop);
      this.active = undefined;
      // Once the run has ended (its output shown), not while it runs: the spare's start shares the processor.
      if (this.config.spare === "on-first-run") warmSpareLater(this.config, SPARE_AFTER_RUN_MS, () => this.wantsSpare() && !this.active);
      // A stopped run can end (its task cancelled) before its SIGINT is set: that SIGINT, sent
      // on the same channel as this, must not interrupt whatever Python does next.
      if (run.stopReason) await worker.clearInterrupt();
      if (this.current.alive) {
        this.prep.ready(this.current).then(
          (ready) => {
            if (!this.active && this.current.alive) this.setState({ kind: "ready", info: ready });
          },
          () => undefined,
        );
      }
    }
  }
}

/** A run stopped while it waited its turn (`since` it was asked for): none of it ran. */
export function stoppedBeforeStart(since: number): RunResult {
  const error = { ename: "KeyboardInterrupt", evalue: "Stopped before it started.", traceback: "" };
  return { status: "interrupted", error, durationMs: performance.now() - since, notStarted: true };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
