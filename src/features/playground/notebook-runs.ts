import type { WorkerEvent } from "../../../workers/python-api";
import type { OutputItem, RunOutcome } from "../../model/output";
import type { CellRunState } from "../../notebook/model";
import { RunOwner, type FinishedRun } from "../../runtime/run-owner";

/** Where the person asked a cell to run instead of where the router sends it: none, the provider's sandbox, the Jupyter server. */
export type RunTarget = "" | "sandbox" | "jupyter";

/** What a notebook's runs need from the page: each cell's code, where it runs, and what to keep. */
export interface RunsHost {
  /** The code of cell `id` now, or undefined when it is gone or not a code cell. */
  source(id: string): string | undefined;
  execute(source: string, options: { signal: AbortSignal; onEvent: (event: WorkerEvent) => void; target: RunTarget }): Promise<RunOutcome>;
  /** Cell `id` starts its run as number `count`. */
  counted(id: string, count: number): void;
  /** The outputs of cell `id` so far, at most every {@link OUTPUT_SAVE_INTERVAL_MS} while it runs, and at its end. */
  outputs(id: string, outputs: OutputItem[]): void;
  /** Cell `id` ran `source` to its end. */
  finished(id: string, source: string, run: FinishedRun): void | Promise<void>;
}

/** What a cell shows of its runs besides its output. */
export interface CellView {
  state: CellRunState;
  /** The provider whose sandbox could run the code the cell last ran, which the browser could not. */
  offer: string;
  /** Whether the person's Jupyter server is offered for it too. */
  offerJupyter: boolean;
  /** The code whose run made the offer. */
  offerFor: string;
  /** A Markdown cell shows its source to edit (else its rendered text). */
  editing: boolean;
}

/** While a cell runs, its outputs are saved at most this often. */
export const OUTPUT_SAVE_INTERVAL_MS = 250;

const IDLE: CellView = { state: "idle", offer: "", offerJupyter: false, offerFor: "", editing: false };

export class CellRuns {
  readonly owner: RunOwner;
  view: CellView = IDLE;
  private readonly listeners = new Set<() => void>();
  constructor(outputs: OutputItem[]) {
    this.owner = new RunOwner(outputs);
  }
  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
  set(change: Partial<CellView>) {
    this.view = { ...this.view, ...change };
    this.listeners.forEach((listener) => listener());
  }
}

/** The notebook as a whole: the cell running, and how many wait. */
export interface RunsView {
  running: string | null;
  queued: number;
}

/**
 * A notebook's runs: one queue, in the order cells were asked to run, through the notebook's
 * one interpreter; one execution counter for it. A run that does not end ok drops the queue
 * (the cells after it stay unrun, as in Jupyter); Stop stops the running cell and drops the queue.
 */
export class NotebookRuns {
  private readonly cells = new Map<string, CellRuns>();
  private readonly queue: { id: string; target: RunTarget }[] = [];
  private counter = 0;
  view: RunsView = { running: null, queued: 0 };
  private readonly listeners = new Set<() => void>();

  private host: RunsHost | undefined;

  /** What runs ask of the page; set once it is there (no run starts before). */
  connect(host: RunsHost) {
    this.host = host;
  }

  /** Cell `id`'s runs, made with `outputs` shown the first time it is asked for. */
  cell(id: string, outputs: OutputItem[] = []): CellRuns {
    let cell = this.cells.get(id);
    if (!cell) {
      cell = new CellRuns(outputs);
      this.cells.set(id, cell);
    }
    return cell;
  }

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The counter continues after the highest count shown. */
  countFrom(highest: number) {
    this.counter = Math.max(this.counter, highest);
  }

  /** Runs cells `ids` in order, after those already waiting; a cell already waiting or running is not added again. */
  enqueue(ids: readonly string[], target: RunTarget = "") {
    for (const id of ids) {
      if (this.view.running === id || this.queue.some((entry) => entry.id === id)) continue;
      this.queue.push({ id, target });
      this.cell(id).set({ state: "queued" });
    }
    this.changed();
    void this.next();
  }

  /** Stops the running cell and drops the queue. */
  stop() {
    this.dropQueue();
    if (this.view.running) this.cell(this.view.running).owner.stop();
  }

  /** After a restart: runs are counted from 1 again. */
  resetCounter() {
    this.counter = 0;
  }

  /** Cell `id` is deleted: it leaves the queue, and stops if it runs. */
  forget(id: string) {
    const index = this.queue.findIndex((entry) => entry.id === id);
    if (index >= 0) this.queue.splice(index, 1);
    if (this.view.running === id) this.stop();
    this.changed();
  }

  /** Ends when nothing runs, and what the last run's end does (its saves) is done. */
  async idle(): Promise<void> {
    while (this.current) await this.current;
    await this.finishing;
  }

  private current: Promise<void> | undefined;
  /** What the last run's end does: saves and the file list. The next run does not wait for it (the interpreter keeps their order). */
  private finishing: Promise<void> = Promise.resolve();

  private dropQueue() {
    for (const { id } of this.queue.splice(0)) this.cell(id).set({ state: "idle" });
    this.changed();
  }

  private changed() {
    this.view = { running: this.view.running, queued: this.queue.length };
    this.listeners.forEach((listener) => listener());
  }

  private async next(): Promise<void> {
    if (this.current) return;
    const host = this.host;
    const entry = host && this.queue.shift();
    if (!host || !entry) return;
    const source = host.source(entry.id);
    if (source === undefined) {
      this.cell(entry.id).set({ state: "idle" });
      this.changed();
      return this.next();
    }
    this.current = this.runOne(host, entry.id, source, entry.target);
    await this.current;
    this.current = undefined;
    void this.next();
  }

  private async runOne(host: RunsHost, id: string, source: string, target: RunTarget) {
    const cell = this.cell(id);
    this.view = { running: id, queued: this.queue.length };
    this.listeners.forEach((listener) => listener());
    cell.set({ state: "running", offer: "", offerJupyter: false, offerFor: "" });
    host.counted(id, ++this.counter);
    // Outputs saved while the run goes on, at most every OUTPUT_SAVE_INTERVAL_MS.
    let lastSave = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const saveSoon = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        lastSave = performance.now();
        host.outputs(id, cell.owner.current.outputs);
      }, Math.max(0, lastSave + OUTPUT_SAVE_INTERVAL_MS - performance.now()));
    };
    const unsubscribe = cell.owner.subscribe(saveSoon);
    const run = await cell.owner.run((signal, onEvent) => host.execute(source, { signal, onEvent, target }));
    unsubscribe();
    clearTimeout(timer);
    const ok = run.outcome.status === "ok";
    cell.set({ state: ok ? "done" : "failed" });
    // A run that did not end ok leaves the cells after it unrun.
    if (!ok) this.dropQueue();
    this.view = { running: null, queued: this.queue.length };
    this.listeners.forEach((listener) => listener());
    this.finishing = Promise.resolve(host.finished(id, source, run)).catch((error: unknown) => console.error("A run's end could not be saved.", error));
  }

  /** Offer the provider's sandbox (`provider`, or "" for none) and the Jupyter server for the code cell `id` last ran. */
  offer(id: string, provider: string, jupyter: boolean, source: string) {
    this.cell(id).set({ offer: provider, offerJupyter: jupyter, offerFor: source });
  }
}
