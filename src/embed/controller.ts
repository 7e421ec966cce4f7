import type { OutputItem } from "../model/output";
import { runInBrowser } from "../execution/backend";
import { PythonSession, type SessionState } from "../runtime/python-session";
import type { SessionConfig } from "../runtime/session-config";
import { RunOwner } from "../runtime/run-owner";
import type { HostLink } from "./host-link";
import type { EmbedOptions, HostMessage, RunId } from "./protocol";

/** What the widget shows. */
export interface WidgetView {
  code: string;
  outputs: OutputItem[];
  running: boolean;
  startedAt: number;
  finishedRuns: number;
  session: SessionState;
}

/** A run's requester: the widget's own Run button, or the host (with its id and origin). */
type Requester = { host: false } | { host: true; id: RunId; origin: string };

/**
 * One widget's interpreter and what it shows. Runs, file writes and the host's messages
 * are handled one after another, in the order they came.
 */
export class EmbedController {
  readonly session: PythonSession;
  private readonly owner = new RunOwner();
  private view: WidgetView;
  private readonly listeners = new Set<() => void>();
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;
  private link: HostLink | undefined;
  /** Files the host wrote: written again into a worker that replaces this one (a restart drops them). */
  private readonly files = new Map<string, string | Uint8Array>();

  constructor(
    options: EmbedOptions,
    config: SessionConfig,
  ) {
    this.session = new PythonSession(config);
    this.session.setWorkerSetup(async (api) => {
      for (const [path, data] of this.files) await api.writeFile(path, data);
    });
    this.view = {
      code: options.code,
      outputs: [],
      running: false,
      startedAt: 0,
      finishedRuns: 0,
      session: this.session.currentState,
    };
    this.session.subscribe((state) => this.update({ session: state }));
    this.owner.subscribe(() => {
      const { outputs, startedAt, finishedRuns } = this.owner.current;
      this.update({ outputs, startedAt, finishedRuns });
    });
    void this.announceWhenReady();
    if (options.autorun && options.code.trim()) this.run();
  }

  /** Connect the host page; its messages drive this widget from now on. */
  connect(link: HostLink): void {
    this.link = link;
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

  stop(): void {
    this.owner.stop();
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
        this.owner.stop();
        return;
      case "restart":
        this.owner.show([]);
        this.files.clear();
        void this.session.restart().catch(() => undefined);
        void this.announceWhenReady();
        return;
      case "writeFile": {
        const data = typeof message.data === "string" ? message.data : new Uint8Array(message.data);
        // A copy is kept for a replacement worker; the original goes to this one.
        const kept = typeof data === "string" ? data : data.slice();
        this.enqueue(async () => {
          await this.session.writeFile(message.path, data);
          this.files.set(message.path, kept);
        }).catch((error: unknown) =>
          console.error(`Could not write ${message.path}.`, error),
        );
        return;
      }
    }
  }

  dispose(): void {
    this.session.dispose();
    this.listeners.clear();
  }

  /** Tell the host Python is ready (at start, and after each restart). */
  private async announceWhenReady(): Promise<void> {
    try {
      const info = await this.session.ready;
      this.link?.post({ kiln: 1, type: "ready", pyodide: info.pyodideVersion, python: info.pythonVersion });
    } catch {
      // The status line says Python could not start.
    }
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
    const { outcome: result } = await this.owner.run((signal, onEvent) =>
      runInBrowser(this.session, code, {
        signal,
        timeoutMs,
        onEvent: (event) => {
          onEvent(event);
          if (event.type === "stream") reply({ kiln: 1, type: "stream", id, name: event.name, text: event.text });
          else if (event.type === "display") reply({ kiln: 1, type: "display", id, data: event.data });
        },
      }),
    );
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
  }

  private update(change: Partial<WidgetView>): void {
    this.view = { ...this.view, ...change };
    for (const listener of this.listeners) listener();
  }
}
