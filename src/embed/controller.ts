import type { OutputItem } from "../model/output";
import type { SessionState } from "../runtime/python-session";
import { RunOwner } from "../runtime/run-owner";
import type { HostLink } from "./host-link";
import type { EmbedOptions, HostMessage, RunId } from "./protocol";
import { readyInfo, type CheckOutcome, type SessionClient } from "./shared-session";

/** What the widget shows. */
export interface WidgetView {
  code: string;
  outputs: OutputItem[];
  running: boolean;
  startedAt: number;
  finishedRuns: number;
  /** The interpreter's state; absent until the session starts (a cell's first Run). */
  session?: SessionState;
  /** Some cell of the session is running (this one or another). */
  sessionBusy: boolean;
  /** This cell's run waits for the run of cell N. */
  waitingFor?: number;
  /** The last check's outcome (a cell with a check), once it has run. */
  check?: CheckOutcome;
}

/** What a cell of a page adds to a widget (see cell-config.ts). */
export interface CellRole {
  /** Its number on the page, for "Waiting for cell N…" and the queue. */
  number: number;
  /** What the host calls it in `check` messages. */
  name: string | number;
  /** The check that runs after each of its runs that ended ok; empty for none. */
  check: string;
}

/** A run's requester: the widget's own Run button, or the host (with its id and origin). */
type Requester = { host: false } | { host: true; id: RunId; origin: string };

/**
 * One widget and what it shows. Its runs go to its session (its own interpreter, or the one
 * the cells of a page share); its own runs, file writes and the host's messages are handled
 * one after another, in the order they came.
 */
export class EmbedController {
  private readonly owner = new RunOwner();
  private view: WidgetView;
  private readonly listeners = new Set<() => void>();
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;
  private link: HostLink | undefined;
  /** Whether the host was told `ready` since the session (re)started. */
  private announced = false;

  constructor(
    options: EmbedOptions,
    private readonly session: SessionClient,
    private readonly cell: CellRole = { number: 1, name: 1, check: "" },
  ) {
    this.view = {
      code: options.code,
      outputs: [],
      running: false,
      startedAt: 0,
      finishedRuns: 0,
      ...this.fromSession(),
    };
    session.subscribe(() => {
      this.update(this.fromSession());
      this.announceIfReady();
    });
    this.owner.subscribe(() => {
      const { outputs, startedAt, finishedRuns } = this.owner.current;
      this.update({ outputs, startedAt, finishedRuns });
    });
    if (options.autorun && options.code.trim()) this.run();
  }

  /** Connect the host page; its messages drive this widget from now on. */
  connect(link: HostLink): void {
    this.link = link;
    this.announceIfReady();
  }

  get current(): WidgetView {
    return this.view;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  setCode(code: string): void {
    this.update({ code });
  }

  /** Run the code in the editor (Run button, Ctrl/Cmd+Enter, autorun). */
  run(): void {
    this.enqueueRun(this.view.code, { host: false });
  }

  /** Stop: this widget's run, waiting or under way, and whatever run its session has under way. */
  stop(): void {
    this.owner.stop();
    this.session.interrupt();
  }

  /** Start the session's interpreter now, if it has not started. */
  warm(): void {
    this.session.warm();
  }

  answerInput(text: string): void {
    this.owner.answered(text);
    this.session.answerInput(text);
  }

  handle(message: HostMessage, origin: string): void {
    switch (message.type) {
      case "run":
        this.enqueueRun(message.code, { host: true, id: message.id, origin }, message.timeoutMs);
        return;
      case "interrupt":
        this.stop();
        return;
      case "restart":
        this.owner.show([]);
        this.announced = false;
        this.session.restart().catch((error: unknown) => console.error("Could not restart Python.", error));
        return;
      case "writeFile": {
        const data = typeof message.data === "string" ? message.data : new Uint8Array(message.data);
        this.enqueue(() => this.session.writeFile(message.path, data)).catch((error: unknown) =>
          console.error(`Could not write ${message.path}.`, error),
        );
        return;
      }
    }
  }

  private fromSession(): Pick<WidgetView, "session" | "sessionBusy"> {
    const { python, busyCell } = this.session.state;
    return { session: python, sessionBusy: busyCell !== undefined };
  }

  /** Tell the host Python is ready (once it is, and again after each restart it asked for). */
  private announceIfReady(): void {
    const info = readyInfo(this.session.state);
    if (!info || this.announced || !this.link) return;
    this.announced = true;
    this.link.post({ kiln: 1, type: "ready", pyodide: info.pyodideVersion, python: info.pythonVersion });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private enqueueRun(code: string, requester: Requester, timeoutMs?: number): void {
    this.pending++;
    this.update({ running: true });
    void this.enqueue(() => this.execute(code, requester, timeoutMs)).finally(() => {
      this.pending--;
      this.update({ running: this.pending > 0 });
    });
  }

  private async execute(code: string, requester: Requester, timeoutMs?: number): Promise<void> {
    this.update({ code });
    const reply = requester.host
      ? (message: Parameters<HostLink["reply"]>[0]) => this.link?.reply(message, requester.origin)
      : () => undefined;
    const id = requester.host ? requester.id : 0;
    let check: CheckOutcome | undefined;
    const { outcome: result } = await this.owner.run(async (signal, onEvent) => {
      const shared = await this.session.run(
        { code, check: this.cell.check, cell: this.cell.number, ...(timeoutMs !== undefined && { timeoutMs }) },
        {
          signal,
          onWaiting: (cell) => this.update({ waitingFor: cell }),
          onEvent: (event) => {
            onEvent(event);
            if (event.type === "stream") reply({ kiln: 1, type: "stream", id, name: event.name, text: event.text });
            else if (event.type === "display") reply({ kiln: 1, type: "display", id, data: event.data });
          },
        },
      );
      check = shared.check;
      return shared.outcome;
    });
    this.update({ waitingFor: undefined });
    reply({
      kiln: 1,
      type: "result",
      id,
      status: result.status,
      ...(result.value ? { value: result.value } : {}),
      ...(result.error ? { error: result.error } : {}),
      durationMs: result.durationMs,
      ...(result.restored ? { restored: result.restored } : {}),
    });
    if (!check) return;
    this.update({ check });
    // For the host's scores: every check, whoever asked for the run.
    this.link?.post({
      kiln: 1,
      type: "check",
      ...(requester.host && { id }),
      cell: this.cell.name,
      passed: check.passed,
      message: check.message,
    });
  }

  private update(change: Partial<WidgetView>): void {
    this.view = { ...this.view, ...change };
    for (const listener of this.listeners) listener();
  }
}
