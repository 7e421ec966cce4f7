import * as Comlink from "comlink";
import type {
  PythonWorkerApi,
  RunResult,
  RuntimeInfo,
  WorkerEvent,
} from "../../workers/python-api";
import {
  answerStdin,
  createInterruptBuffer,
  createStdinBuffer,
  requestInterrupt,
} from "../../workers/shared-buffers";
import { pyodideIndexUrl, startPythonWorker } from "./python-worker";

export interface SessionConfig {
  /** Lock file to use instead of Pyodide's own; empty for the default. */
  lockFileUrl: string;
  packageBaseUrl: string;
  /** Per-run output cap in bytes. */
  outputLimitBytes: number;
  /** Per-run deadline in milliseconds; 0 disables it. */
  timeoutMs: number;
  /** Whether `input()` may ask the person. */
  allowInput: boolean;
}

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
}

interface Worker_ {
  worker: Worker;
  api: Comlink.Remote<PythonWorkerApi>;
  ready: Promise<RuntimeInfo>;
  /** Rejects when the worker is terminated or dies: a run in it can never finish. */
  gone: Promise<never>;
  end: (reason: Error) => void;
}

interface ActiveRun {
  handlers: RunHandlers;
  stopReason?: "stop" | "deadline";
  /** Called on the worker's "done" event: every event of the run has arrived. */
  drained: () => void;
}

/**
 * A Python interpreter on the page's side: its worker, its state, one run at a time.
 * State persists between runs; two sessions never share a worker.
 */
export class PythonSession {
  private current: Worker_;
  private readonly interruptBuffer = createInterruptBuffer();
  private readonly stdinBuffer = createStdinBuffer();
  private state: SessionState = { kind: "loading", message: "Starting Python…" };
  private readonly listeners = new Set<(state: SessionState) => void>();
  private queue: Promise<unknown> = Promise.resolve();
  private active: ActiveRun | undefined;
  private disposed = false;

  constructor(private config: SessionConfig) {
    this.current = this.spawn();
  }

  get snapshot(): SessionState {
    return this.state;
  }

  /** Resolves when Python is ready (rejects if it could not start). */
  get ready(): Promise<RuntimeInfo> {
    return this.current.ready;
  }

  subscribe(listener: (state: SessionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Settings take effect for the next run; package settings at the next restart. */
  configure(config: SessionConfig): void {
    this.config = config;
  }

  /** Run code after any run already queued. */
  run(code: string, handlers: RunHandlers = {}): Promise<RunResult> {
    const next = this.queue.then(() => this.execute(code, handlers));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Stop the running code (KeyboardInterrupt); variables survive. */
  interrupt(reason: "stop" | "deadline" = "stop"): void {
    if (!this.active) return;
    this.active.stopReason ??= reason;
    requestInterrupt(this.interruptBuffer);
    answerStdin(this.stdinBuffer, null);
  }

  /** Give the person's answer to a waiting `input()`; null cancels it. */
  answerInput(text: string | null): void {
    answerStdin(this.stdinBuffer, text);
  }

  /** A fresh interpreter: every variable is gone. */
  async restart(): Promise<RuntimeInfo> {
    if (this.active) this.interrupt();
    this.terminate();
    this.current = this.spawn();
    return this.current.ready;
  }

  dispose(): void {
    this.disposed = true;
    this.terminate();
    this.listeners.clear();
  }

  private setState(state: SessionState): void {
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }

  private spawn(): Worker_ {
    const worker = startPythonWorker();
    const api = Comlink.wrap<PythonWorkerApi>(worker);
    const channel = new MessageChannel();
    channel.port1.onmessage = (message: MessageEvent<WorkerEvent>) => this.onWorkerEvent(message.data);
    this.setState({ kind: "loading", message: "Loading Python…" });
    let end: (reason: Error) => void = () => undefined;
    const gone = new Promise<never>((_, reject) => {
      end = reject;
      worker.addEventListener("error", (event) => {
        event.preventDefault();
        reject(new Error(event.message || "The Python worker stopped unexpectedly."));
      });
    });
    gone.catch(() => undefined);
    const ready = Promise.race([
      api.init(
        Comlink.transfer(
          {
            indexURL: pyodideIndexUrl(),
            lockFileURL: this.config.lockFileUrl,
            packageBaseUrl: this.config.packageBaseUrl,
            interruptBuffer: this.interruptBuffer,
            stdinBuffer: this.stdinBuffer,
            events: channel.port2,
          },
          [channel.port2],
        ),
      ),
      gone,
    ]);
    const entry: Worker_ = { worker, api, ready, gone, end };
    ready.then(
      (info) => {
        if (this.current === entry && !this.disposed) this.setState({ kind: "ready", info });
      },
      (error: unknown) => {
        if (this.current === entry && !this.disposed) {
          this.setState({ kind: "error", message: `Python could not start: ${describe(error)}` });
        }
      },
    );
    return entry;
  }

  private terminate(): void {
    this.current.end(new Error("Python was restarted."));
    this.current.api[Comlink.releaseProxy]();
    this.current.worker.terminate();
  }

  private onWorkerEvent(event: WorkerEvent): void {
    if (event.type === "progress" && this.state.kind === "running") {
      // Package loading is shown in the status line as well as to the run.
      this.setState({ ...this.state, message: event.message });
    }
    if (event.type === "done") this.active?.drained();
    else this.active?.handlers.onEvent?.(event);
  }

  private async execute(code: string, handlers: RunHandlers): Promise<RunResult> {
    const started = performance.now();
    const entry = this.current;
    let info: RuntimeInfo;
    try {
      info = await entry.ready;
    } catch (error) {
      return {
        status: "crashed",
        error: { ename: "RuntimeError", evalue: describe(error), traceback: "" },
        durationMs: performance.now() - started,
      };
    }
    let drained = () => undefined as void;
    // Results come over Comlink, events over their own port: wait for both to be in.
    const allEvents = new Promise<void>((resolve) => (drained = resolve));
    const run: ActiveRun = { handlers, drained };
    this.active = run;
    this.setState({ kind: "running", info });
    const timeoutMs = handlers.timeoutMs ?? this.config.timeoutMs;
    const deadline = timeoutMs > 0 ? setTimeout(() => this.interrupt("deadline"), timeoutMs) : undefined;
    try {
      const result = await Promise.race([
        Promise.all([
          entry.api.run(code, {
            allowInput: this.config.allowInput,
            outputLimitBytes: this.config.outputLimitBytes,
          }),
          allEvents,
        ]).then(([result]) => result),
        entry.gone,
      ]).catch(
        (error: unknown): RunResult => ({
          status: run.stopReason ? "interrupted" : "crashed",
          error: { ename: "RuntimeError", evalue: describe(error), traceback: "" },
          durationMs: performance.now() - started,
        }),
      );
      if (result.status === "interrupted" && run.stopReason === "deadline") {
        return { ...result, status: "timeout" };
      }
      return result;
    } finally {
      clearTimeout(deadline);
      this.active = undefined;
      if (this.current === entry && !this.disposed) this.setState({ kind: "ready", info });
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
