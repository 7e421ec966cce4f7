import type { WorkerEvent } from "../../workers/python-api";
import type { OutputItem, RunOutcome } from "../model/output";
import { RunLimits } from "../../workers/output-limits";
import { answerInput, applyEvents, applyResult } from "./output-model";
import { capBundle } from "../storage/output-caps";

/** What a view shows of its runs. */
export interface RunView {
  outputs: OutputItem[];
  running: boolean;
  /** `performance.now()` when the current or last run started. */
  startedAt: number;
  /** Runs finished so far. */
  finishedRuns: number;
}

/** What a run produced: its outcome, every event in order, and the outputs shown. */
export interface FinishedRun {
  outcome: RunOutcome;
  /** Every event, but those of the outputs past {@link MAX_RUN_OUTPUTS}. */
  events: WorkerEvent[];
  outputs: OutputItem[];
  /** Outputs (displays, input prompts) past {@link MAX_RUN_OUTPUTS}, dropped. */
  droppedOutputs: number;
}

/**
 * Displays, and input prompts, one run shows at most of each; the rest are dropped, with a notice.
 * Each is a block of its own in the page, so a loop of small displays would otherwise make
 * every later one cost more to show than the one before.
 */
export const MAX_RUN_OUTPUTS = 1000;

/** While a run streams, its views are told of new output at most this often. */
export const NOTIFY_INTERVAL_MS = 16;

/** An event with its bundle capped to the run's limits (a display's, an update's). */
function capped(limits: RunLimits, event: WorkerEvent): WorkerEvent {
  if (event.type === "display") {
    return { type: "display", ...capBundle(limits, event.data, event.cut), ...(event.displayId !== undefined && { displayId: event.displayId }) };
  }
  if (event.type === "update-display") return { type: "update-display", displayId: event.displayId, ...capBundle(limits, event.data, event.cut) };
  return event;
}

/** Runs a piece of code: where it goes is the caller's; Stop aborts `signal`. */
export type Execute = (signal: AbortSignal, onEvent: (event: WorkerEvent) => void) => Promise<RunOutcome>;

/**
 * The one owner of a view's runs: its outputs, whether one is running, when it started,
 * and Stop. The Playground, the widget and each chat cell use it.
 */
export class RunOwner {
  private view: RunView;
  private readonly listeners = new Set<() => void>();
  private controller: AbortController | undefined;

  constructor(outputs: OutputItem[] = []) {
    this.view = { outputs, running: false, startedAt: 0, finishedRuns: 0 };
  }

  get current(): RunView {
    return this.view;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Replace what is shown (saved outputs, a cleared view). */
  show(outputs: OutputItem[]): void {
    this.unshown = [];
    this.update({ outputs });
  }

  /** Run one piece of code; one at a time (a second call while one runs waits for it). */
  async run(execute: Execute): Promise<FinishedRun> {
    while (this.running) await this.running;
    let done!: () => void;
    this.running = new Promise<void>((resolve) => (done = resolve));
    const controller = new AbortController();
    this.controller = controller;
    const events: WorkerEvent[] = [];
    /** Where the displays with an id are in `events`, by id. */
    const withId = new Map<string, number[]>();
    const shown = { display: 0, "input-request": 0 };
    let droppedOutputs = 0;
    // What the run sends is capped here again, wherever it ran: nothing on the page trusts the sender to have done it.
    const limits = new RunLimits();
    this.update({ outputs: [], running: true, startedAt: performance.now() });
    let outcome: RunOutcome;
    try {
      outcome = await execute(controller.signal, (received) => {
        // Progress is shown in the session's status line; it adds nothing to the output, so it is not kept.
        if (received.type === "progress") return;
        const event = capped(limits, received);
        if (event.type === "clear-output" || event.type === "update-display") {
          if (event.type === "clear-output") {
            // What was shown is gone: so are its events (the model is told what the person sees), and its count.
            events.length = 0;
            withId.clear();
            shown.display = shown["input-request"] = droppedOutputs = 0;
          } else {
            // An update replaces the display it names, in the events as on the page: a flood of updates keeps one.
            const { displayId, data, cut } = event;
            for (const index of withId.get(displayId) ?? []) events[index] = { type: "display", data, displayId, ...(cut && { cut }) };
          }
          this.unshown.push(event);
          this.update({}, true);
          return;
        }
        // Displays and prompts are counted apart: a prompt after many displays is still shown (Python waits for its answer).
        if ((event.type === "display" || event.type === "input-request") && ++shown[event.type] > MAX_RUN_OUTPUTS) {
          if (!droppedOutputs++) {
            const text = `Output truncated: this run showed more than ${MAX_RUN_OUTPUTS} outputs; the rest is not shown.`;
            this.showUnshown();
            this.update({ outputs: [...this.view.outputs, { kind: "notice", tone: "warning", text }] }, true);
          }
          return;
        }
        if (event.type === "display" && event.displayId !== undefined) withId.set(event.displayId, [...(withId.get(event.displayId) ?? []), events.length]);
        events.push(event);
        // Added to the outputs when the views are next told, all together: a flood of small
        // events copies the outputs once per notification, not once per event.
        this.unshown.push(event);
        this.update({}, event.type !== "input-request");
      });
    } catch (error) {
      // Never a run that ends showing nothing: the person (or the model, or the widget's host) is told.
      console.error("A run failed.", error);
      const evalue = error instanceof Error ? error.message : String(error);
      outcome = { status: "crashed", error: { ename: "RunError", evalue, traceback: "" }, durationMs: performance.now() - this.view.startedAt };
    }
    if (outcome.value) {
      const { data, cut } = capBundle(limits, outcome.value, outcome.valueCut);
      outcome = { ...outcome, value: data, valueCut: cut };
      if (!cut) delete outcome.valueCut;
    }
    this.controller = undefined;
    this.running = undefined;
    this.showUnshown();
    const outputs = applyResult(this.view.outputs, outcome);
    this.update({ outputs, running: false, finishedRuns: this.view.finishedRuns + 1 });
    done();
    return { outcome, events, outputs, droppedOutputs };
  }

  private running: Promise<void> | undefined;

  /** Stop the current run, wherever it runs. */
  stop(): void {
    this.controller?.abort();
  }

  /** Record the person's answer to the pending `input()` prompt. */
  answered(text: string): void {
    this.showUnshown();
    this.update({ outputs: answerInput(this.view.outputs, text) });
  }

  private notifyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Events of the current run not yet added to its outputs. */
  private unshown: WorkerEvent[] = [];

  /** Add the events received since the views were last told to the outputs (the view's outputs, so an answer to input() given meanwhile stays). */
  private showUnshown(): void {
    if (!this.unshown.length) return;
    const events = this.unshown;
    this.unshown = [];
    this.view = { ...this.view, outputs: applyEvents(this.view.outputs, events) };
  }

  /** Change what is shown; `soon`: tell the views within {@link NOTIFY_INTERVAL_MS}, with whatever else comes meanwhile. */
  private update(change: Partial<RunView>, soon = false): void {
    if (Object.keys(change).length) this.view = { ...this.view, ...change };
    if (soon) {
      this.notifyTimer ??= setTimeout(() => this.notify(), NOTIFY_INTERVAL_MS);
      return;
    }
    this.notify();
  }

  private notify(): void {
    this.showUnshown();
    clearTimeout(this.notifyTimer);
    this.notifyTimer = undefined;
    for (const listener of this.listeners) listener();
  }
}
