/**
 * One interpreter shared by the cells of a session. The session's first cell holds it (a
 * {@link SessionHost}); the other cells reach it with postMessage between Kiln's own frames of
 * the same host page (see siblings.ts). Runs from every cell take turns in one queue; Stop from
 * any cell stops the run under way.
 */
import type { RunOutcome } from "../model/output";
import type { RuntimeInfo, WorkerEvent } from "../../workers/python-api";
import { PythonSession, stoppedBeforeStart, type SessionState } from "../runtime/python-session";
import type { SessionConfig } from "../runtime/session-config";

/** What every cell of a session shows of it. */
export interface SharedState {
  /** The interpreter's state; absent until something starts it (a Run, an autorun, a preload). */
  python?: SessionState;
  /** The number of the cell whose run is under way, if any. */
  busyCell?: number;
}

export interface RunRequest {
  code: string;
  /** Runs after `code` when it ended ok, in the same turn; empty for none. */
  check: string;
  timeoutMs?: number;
  /** The requesting cell's number. */
  cell: number;
}

export interface CheckOutcome {
  passed: boolean;
  /** "Passed", the AssertionError's message, or the last line of another error. */
  message: string;
}

export interface SharedRunResult {
  outcome: RunOutcome;
  check?: CheckOutcome;
}

export interface RunCallbacks {
  /** Stop: the run ends interrupted, or never starts if it still waits its turn. */
  signal: AbortSignal;
  onEvent: (event: WorkerEvent) => void;
  /** The run waits for cell `cell`'s (undefined: it is its turn now). */
  onWaiting: (cell: number | undefined) => void;
}

/** A cell's view of its session, wherever the interpreter lives. */
export interface SessionClient {
  readonly state: SharedState;
  subscribe(listener: () => void): () => void;
  run(request: RunRequest, callbacks: RunCallbacks): Promise<SharedRunResult>;
  /** Stop the session's run under way, whichever cell asked for it. */
  interrupt(): void;
  /** A fresh interpreter: every variable and file is gone; the setup runs again before the next run. */
  restart(): Promise<void>;
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  answerInput(text: string | null): void;
  /** Start the interpreter now (autorun, a cell in view), if it has not started. */
  warm(): void;
}

type Job =
  | { kind: "run"; request: RunRequest; callbacks: RunCallbacks; done: (result: SharedRunResult) => void }
  | { kind: "write"; path: string; data: string | Uint8Array; done: () => void; fail: (error: unknown) => void };

/**
 * The interpreter of a session and its queue. It starts no Python until something asks it to
 * run, or to {@link warm} up.
 */
export class SessionHost implements SessionClient {
  private session: PythonSession | undefined;
  private readonly jobs: Job[] = [];
  private active: Job | undefined;
  private pumping = false;
  private setupDone = false;
  private readonly listeners = new Set<() => void>();
  private shared: SharedState = {};
  /** Files written through the protocol: written again into a worker that replaces this one (a restart drops them). */
  private readonly files = new Map<string, string | Uint8Array>();

  constructor(
    private readonly config: SessionConfig,
    private readonly setup = "",
  ) {}

  get state(): SharedState {
    return this.shared;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The interpreter, started now if it was not yet (`forRun`: for a run that waits for it). */
  start(forRun = false): PythonSession {
    if (this.session) return this.session;
    const session = new PythonSession(this.config, { runWaits: forRun });
    session.setWorkerSetup(async (api) => {
      for (const [path, data] of this.files) await api.writeFile(path, data);
    });
    this.session = session;
    session.subscribe(() => this.changed());
    this.changed();
    return session;
  }

  warm(): void {
    this.start();
  }

  run(request: RunRequest, callbacks: RunCallbacks): Promise<SharedRunResult> {
    return new Promise((done) => {
      const job: Job = { kind: "run", request, callbacks, done };
      this.jobs.push(job);
      const running = this.active?.kind === "run" ? this.active.request.cell : undefined;
      if (running !== undefined) callbacks.onWaiting(running);
      // Stopped while it waits its turn: it leaves the queue at once, none of it run.
      const queued = performance.now();
      callbacks.signal.addEventListener(
        "abort",
        () => {
          const at = this.jobs.indexOf(job);
          if (at < 0) return;
          this.jobs.splice(at, 1);
          done({ outcome: stoppedBeforeStart(queued) });
        },
        { once: true },
      );
      void this.pump();
    });
  }

  interrupt(): void {
    this.session?.interrupt();
  }

  async restart(): Promise<void> {
    this.setupDone = false;
    this.files.clear();
    if (this.session) await this.session.restart();
  }

  writeFile(path: string, data: string | Uint8Array): Promise<void> {
    // A copy is kept for a replacement worker; the original goes to this one.
    const kept = typeof data === "string" ? data : data.slice();
    // Not started: the file waits in `files`, which every new worker gets before its first run.
    if (!this.session) {
      this.files.set(path, kept);
      return Promise.resolve();
    }
    return new Promise((done, fail) => {
      this.jobs.push({ kind: "write", path, data, done: () => (this.files.set(path, kept), done()), fail });
      void this.pump();
    });
  }

  answerInput(text: string | null): void {
    this.session?.answerInput(text);
  }

  dispose(): void {
    this.session?.dispose();
    this.listeners.clear();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let job = this.jobs.shift(); job; job = this.jobs.shift()) {
        this.active = job;
        this.changed();
        if (job.kind === "run") {
          job.callbacks.onWaiting(undefined);
          for (const waiting of this.jobs) if (waiting.kind === "run") waiting.callbacks.onWaiting(job.request.cell);
          job.done(await this.execute(job.request, job.callbacks));
        } else {
          await this.start()
            .writeFile(job.path, job.data)
            .then(job.done, job.fail);
        }
      }
    } finally {
      this.active = undefined;
      this.pumping = false;
      this.changed();
    }
  }

  private async execute({ code, check, timeoutMs }: RunRequest, { signal, onEvent }: RunCallbacks): Promise<SharedRunResult> {
    const session = this.start(true);
    const deadline = timeoutMs !== undefined ? { timeoutMs } : {};
    if (this.setup && !this.setupDone) {
      // Hidden: only a failure is shown, in the cell whose run it held up.
      const setup = await session.run(this.setup, { signal, ...deadline });
      if (setup.status !== "ok") {
        const error = setup.error ?? { ename: "RuntimeError", evalue: setup.status, traceback: "" };
        return { outcome: { ...setup, error: { ...error, evalue: `The page's setup code failed: ${error.ename}: ${error.evalue}` } } };
      }
      this.setupDone = true;
    }
    const outcome = await session.run(code, { signal, onEvent, ...deadline });
    if (outcome.status !== "ok" || !check) return { outcome };
    // In the same turn: no other cell's run comes between the run and its check.
    return { outcome, check: checkOutcome(await session.run(check, deadline)) };
  }

  private changed(): void {
    const busyCell = this.active?.kind === "run" ? this.active.request.cell : undefined;
    this.shared = { ...(this.session && { python: this.session.currentState }), ...(busyCell !== undefined && { busyCell }) };
    for (const listener of this.listeners) listener();
  }
}

/** What a check's run says: passed, the AssertionError's message, or another error's last line. */
export function checkOutcome(result: RunOutcome): CheckOutcome {
  if (result.status === "ok") return { passed: true, message: "Passed" };
  const error = result.error;
  if (!error) return { passed: false, message: `The check ended: ${result.status}.` };
  if (error.ename === "AssertionError") return { passed: false, message: error.evalue.trim() || "The check failed." };
  const lines = error.traceback.split("\n").map((line) => line.trim()).filter(Boolean);
  return { passed: false, message: lines.at(-1) ?? `${error.ename}: ${error.evalue}` };
}

/** `info` of a started, ready (or running) interpreter, if it is. */
export function readyInfo(state: SharedState): RuntimeInfo | undefined {
  const python = state.python;
  return python && (python.kind === "ready" || python.kind === "running") ? python.info : undefined;
}
