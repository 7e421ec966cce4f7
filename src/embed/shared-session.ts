/**
 * One interpreter shared by the cells of a session. The session's first cell holds it (a
 * {@link SessionHost}); the other cells reach it with postMessage between Kiln's own frames of
 * the same host page ({@link RemoteSession}, served by {@link serveSiblings}). Runs from every
 * cell take turns in one queue; Stop from any cell stops the run under way.
 *
 * Who may speak: a message counts only when it comes from Kiln's own origin, from a frame of
 * the same parent window (a sibling: a frame of another page, another tab or another host can
 * never be one), and carries the session's token, which `embed.js` draws at random for each
 * page load. The host page itself never passes the origin check: it speaks protocol version 1
 * to each frame, and nothing else.
 */
import type { RunOutcome } from "../model/output";
import type { RuntimeInfo, WorkerEvent } from "../../workers/python-api";
import { PythonSession, stoppedBeforeStart, type SessionState } from "../runtime/python-session";
import type { SessionConfig } from "../runtime/session-config";
import { MAX_CELL_CODE_CHARS } from "./cell-config";
import { MAX_FILE_BYTES, MAX_PATH_CHARS } from "./protocol";

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

/** The messages between the frames of a session. */
type ToLead =
  | { type: "hello" }
  | { type: "run"; req: number; code: string; check: string; timeoutMs?: number; cell: number }
  | { type: "abort"; req: number }
  | { type: "interrupt" }
  | { type: "restart"; req: number }
  | { type: "write"; req: number; path: string; data: string | Uint8Array }
  | { type: "answer"; text: string | null }
  | { type: "warm" };

type ToCell =
  | { type: "announce" }
  | { type: "state"; state: SharedState }
  | { type: "event"; req: number; event: WorkerEvent }
  | { type: "waiting"; req: number; cell: number | null }
  | { type: "result"; req: number; result: SharedRunResult }
  | { type: "done"; req: number; error?: string };

type Envelope<T> = T & { kilnCells: 1; token: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isReq = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value);

/**
 * Whether `event` is a message of this session from a sibling frame of Kiln's own: the same
 * origin as this frame, the same parent window, the same token.
 */
function fromSibling(event: MessageEvent, token: string): Record<string, unknown> | undefined {
  if (event.origin !== location.origin || window.parent === window) return undefined;
  const source = event.source;
  if (!source || source === window || !("parent" in source) || source.parent !== window.parent) return undefined;
  const data: unknown = event.data;
  if (!isRecord(data) || data.kilnCells !== 1 || data.token !== token || typeof data.type !== "string") return undefined;
  return data;
}

/** A well-formed message to the lead, or undefined. */
function parseToLead(data: Record<string, unknown>): ToLead | undefined {
  switch (data.type) {
    case "hello":
    case "interrupt":
    case "warm":
      return { type: data.type };
    case "run": {
      const { req, code, check, timeoutMs, cell } = data;
      if (!isReq(req) || !isReq(cell) || typeof code !== "string" || typeof check !== "string") return undefined;
      if (code.length > MAX_CELL_CODE_CHARS || check.length > MAX_CELL_CODE_CHARS) return undefined;
      if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !(timeoutMs >= 0))) return undefined;
      return { type: "run", req, code, check, cell, ...(timeoutMs !== undefined && { timeoutMs }) };
    }
    case "abort":
    case "restart":
      return isReq(data.req) ? { type: data.type, req: data.req } : undefined;
    case "write": {
      const { req, path, data: content } = data;
      if (!isReq(req) || typeof path !== "string" || !path || path.length > MAX_PATH_CHARS) return undefined;
      if (typeof content === "string" && content.length <= MAX_FILE_BYTES) return { type: "write", req, path, data: content };
      if (content instanceof Uint8Array && content.byteLength <= MAX_FILE_BYTES) return { type: "write", req, path, data: content };
      return undefined;
    }
    case "answer":
      return typeof data.text === "string" || data.text === null ? { type: "answer", text: data.text } : undefined;
    default:
      return undefined;
  }
}

/** Every sibling frame of this one (the frames of its parent window but itself). */
function siblings(): Window[] {
  const parent = window.parent;
  if (parent === window) return [];
  const frames: Window[] = [];
  for (let i = 0; i < parent.length; i++) {
    const frame = parent[i];
    if (frame && frame !== window) frames.push(frame);
  }
  return frames;
}

/**
 * Serves the session held by this frame to the other cells of the session: each is answered
 * where it wrote from, and told of the session's state as it changes.
 */
export function serveSiblings(host: SessionHost, token: string): () => void {
  const cells = new Set<Window>();
  const post = (to: Window, message: ToCell) => {
    try {
      to.postMessage({ kilnCells: 1, token, ...message } satisfies Envelope<ToCell>, location.origin);
    } catch (error) {
      console.error("Could not post to a cell of this session.", error);
    }
  };
  /** Each cell's runs under way or waiting, by its request number: to stop one that waits. */
  const runs = new Map<Window, Map<number, AbortController>>();
  const receive = (event: MessageEvent) => {
    const data = fromSibling(event, token);
    const message = data && parseToLead(data);
    if (!message) return;
    const cell = event.source as Window;
    cells.add(cell);
    switch (message.type) {
      case "hello":
        post(cell, { type: "state", state: host.state });
        return;
      case "run": {
        const abort = new AbortController();
        const { req } = message;
        const mine = runs.get(cell) ?? new Map<number, AbortController>();
        runs.set(cell, mine.set(req, abort));
        void host
          .run(message, {
            signal: abort.signal,
            onEvent: (workerEvent) => post(cell, { type: "event", req, event: workerEvent }),
            onWaiting: (waitingFor) => post(cell, { type: "waiting", req, cell: waitingFor ?? null }),
          })
          .then((result) => post(cell, { type: "result", req, result }))
          .finally(() => mine.delete(req));
        return;
      }
      case "abort":
        runs.get(cell)?.get(message.req)?.abort();
        return;
      case "interrupt":
        host.interrupt();
        return;
      case "restart":
        void host.restart().then(
          () => post(cell, { type: "done", req: message.req }),
          (error: unknown) => post(cell, { type: "done", req: message.req, error: String(error) }),
        );
        return;
      case "write":
        void host.writeFile(message.path, message.data).then(
          () => post(cell, { type: "done", req: message.req }),
          (error: unknown) => post(cell, { type: "done", req: message.req, error: String(error) }),
        );
        return;
      case "answer":
        host.answerInput(message.text);
        return;
      case "warm":
        host.warm();
        return;
    }
  };
  window.addEventListener("message", receive);
  const unsubscribe = host.subscribe(() => {
    for (const cell of cells) post(cell, { type: "state", state: host.state });
  });
  // Cells that loaded before this frame said hello to nobody: they say it again on this.
  for (const frame of siblings()) post(frame, { type: "announce" });
  return () => {
    window.removeEventListener("message", receive);
    unsubscribe();
  };
}

/** How long a cell waits to hear from its session's first cell before its run fails. */
const REACH_LIMIT_MS = 30_000;

interface PendingRun {
  callbacks: RunCallbacks;
  done: (result: SharedRunResult) => void;
}

/** A cell's session held by another frame of the page (the session's first cell). */
export class RemoteSession implements SessionClient {
  private lead: Window | undefined;
  private shared: SharedState = {};
  private readonly listeners = new Set<() => void>();
  private readonly outbox: ToLead[] = [];
  private readonly runs = new Map<number, PendingRun>();
  private readonly calls = new Map<number, { done: () => void; fail: (error: Error) => void }>();
  private next = 0;
  private reachTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly token: string) {
    window.addEventListener("message", this.receive);
    this.sayHello();
  }

  get state(): SharedState {
    return this.shared;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  run(request: RunRequest, callbacks: RunCallbacks): Promise<SharedRunResult> {
    const req = ++this.next;
    return new Promise((done) => {
      this.runs.set(req, { callbacks, done });
      callbacks.signal.addEventListener("abort", () => this.send({ type: "abort", req }), { once: true });
      this.send({ type: "run", req, ...request });
    });
  }

  interrupt(): void {
    this.send({ type: "interrupt" });
  }

  restart(): Promise<void> {
    return this.call((req) => ({ type: "restart", req }));
  }

  writeFile(path: string, data: string | Uint8Array): Promise<void> {
    return this.call((req) => ({ type: "write", req, path, data }));
  }

  answerInput(text: string | null): void {
    this.send({ type: "answer", text });
  }

  warm(): void {
    this.send({ type: "warm" });
  }

  private call(message: (req: number) => ToLead): Promise<void> {
    const req = ++this.next;
    return new Promise((done, fail) => {
      this.calls.set(req, { done, fail });
      this.send(message(req));
    });
  }

  private post(to: Window, message: ToLead): void {
    to.postMessage({ kilnCells: 1, token: this.token, ...message } satisfies Envelope<ToLead>, location.origin);
  }

  private send(message: ToLead): void {
    if (this.lead) {
      this.post(this.lead, message);
      return;
    }
    this.outbox.push(message);
    this.sayHello();
    this.reachTimer ??= setTimeout(() => this.unreachable(), REACH_LIMIT_MS);
  }

  private sayHello(): void {
    for (const frame of siblings()) this.post(frame, { type: "hello" });
  }

  /** No first cell answered: what waits for it fails, in words. */
  private unreachable(): void {
    this.reachTimer = undefined;
    if (this.lead) return;
    this.outbox.length = 0;
    const evalue = "This cell's session could not be reached: the first cell of its session is not on the page.";
    for (const [req, run] of this.runs) {
      this.runs.delete(req);
      run.done({ outcome: { status: "crashed", error: { ename: "SessionError", evalue, traceback: "" }, durationMs: 0 } });
    }
    for (const [req, call] of this.calls) {
      this.calls.delete(req);
      call.fail(new Error(evalue));
    }
  }

  private readonly receive = (event: MessageEvent): void => {
    const data = fromSibling(event, this.token);
    if (!data) return;
    const source = event.source as Window;
    if (this.lead && source !== this.lead) return;
    switch (data.type) {
      case "announce":
        if (!this.lead) this.post(source, { type: "hello" });
        return;
      case "state": {
        if (!isRecord(data.state)) return;
        if (!this.lead) {
          // The session's first cell answered: what waited for it goes now, in order.
          this.lead = source;
          clearTimeout(this.reachTimer);
          this.reachTimer = undefined;
          for (const message of this.outbox.splice(0)) this.post(source, message);
        }
        this.shared = data.state as SharedState;
        for (const listener of this.listeners) listener();
        return;
      }
      case "event": {
        if (isRecord(data.event) && typeof data.event.type === "string") this.runs.get(data.req as number)?.callbacks.onEvent(data.event as WorkerEvent);
        return;
      }
      case "waiting": {
        const cell = data.cell;
        this.runs.get(data.req as number)?.callbacks.onWaiting(isReq(cell) ? cell : undefined);
        return;
      }
      case "result": {
        const run = this.runs.get(data.req as number);
        if (!run || !isRecord(data.result) || !isRecord(data.result.outcome)) return;
        this.runs.delete(data.req as number);
        run.done(data.result as unknown as SharedRunResult);
        return;
      }
      case "done": {
        const call = this.calls.get(data.req as number);
        if (!call) return;
        this.calls.delete(data.req as number);
        if (typeof data.error === "string") call.fail(new Error(data.error));
        else call.done();
        return;
      }
    }
  };
}

/** `info` of a started, ready (or running) interpreter, if it is. */
export function readyInfo(state: SharedState): RuntimeInfo | undefined {
  const python = state.python;
  return python && (python.kind === "ready" || python.kind === "running") ? python.info : undefined;
}
