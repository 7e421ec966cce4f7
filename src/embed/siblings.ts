/**
 * The other cells of a session reach the one that holds its interpreter (the lead's
 * {@link SessionHost}) with postMessage between Kiln's own frames of the same host page: a
 * {@link RemoteSession} in each, served by {@link serveSiblings} in the lead.
 *
 * Who may speak: a message counts only when it comes from Kiln's own origin, from a frame of
 * the same parent window (a sibling: a frame of another page, another tab or another host can
 * never be one), and carries the session's token, which `embed.js` draws at random for each
 * page load. The host page itself never passes the origin check: it speaks protocol version 1
 * to each frame, and nothing else.
 */
import type { WorkerEvent } from "../../workers/python-api";
import { MAX_CELL_CODE_CHARS } from "./cell-config";
import { MAX_FILE_BYTES, MAX_PATH_CHARS } from "./protocol";
import type { RunCallbacks, RunRequest, SessionClient, SessionHost, SharedRunResult, SharedState } from "./shared-session";

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

/** Every sibling frame of this one that shows Kiln (the frames of its parent window but itself). */
function siblings(): Window[] {
  const parent = window.parent;
  if (parent === window) return [];
  const frames: Window[] = [];
  for (let i = 0; i < parent.length; i++) {
    const frame = parent[i];
    if (frame && frame !== window && showsKiln(frame)) frames.push(frame);
  }
  return frames;
}

/**
 * Whether `frame` shows a page of Kiln's origin now. The host page's own frames, and a cell's
 * frame that has not loaded yet (its first document is the host's), are of another origin: a
 * message to them would not be delivered, and the browser would log an error in the host's
 * console for each. Reading their location throws; a cell that loads later says hello itself.
 */
function showsKiln(frame: Window): boolean {
  try {
    return frame.location.origin === location.origin;
  } catch {
    return false;
  }
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

