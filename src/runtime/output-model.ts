import { capPrompt } from "../../workers/text-limits";
import type { SentCuts, WorkerEvent } from "../../workers/python-api";
import type { KeptCuts, OutputItem, RanElsewhere, RunOutcome } from "../model/output";
import { asFile } from "../storage/output-caps";
import { grouped } from "./file-limits";
import { MAX_SAVED_VARIABLES } from "../model/session-snapshot";
import { streamBlocks } from "../model/stream-blocks";

export type { OutputItem };

export { MAX_STREAM_ITEMS, STREAM_PIECE_CHARS, STREAMS_JOINED_NOTICE } from "../model/stream-blocks";

/** Add one worker event to a run's output (returns a new array). */
export function applyEvent(items: readonly OutputItem[], event: WorkerEvent): OutputItem[] {
  return applyEvents(items, [event]);
}

/**
 * Add worker events to a run's output, in order. Returns a new array, copied once for all of
 * them: a flood of small events costs what its text costs, not a copy of the output each.
 */
export function applyEvents(items: readonly OutputItem[], events: readonly WorkerEvent[]): OutputItem[] {
  const next = [...items];
  let blocks = streamBlocks(next);
  /** Where the displays with an id are, made when the first update comes. */
  let withId: Map<string, number[]> | undefined;
  for (const event of events) {
    if (event.type === "stream") {
      blocks.stream(event.name, event.text);
      continue;
    }
    if (event.type === "clear-output") {
      next.length = 0;
      blocks = streamBlocks(next);
      withId = undefined;
      continue;
    }
    if (event.type === "update-display") {
      // Replaced in place, nothing added: a flood of updates costs no more blocks on the page.
      withId ??= displaysWithId(next);
      for (const index of withId.get(event.displayId) ?? []) {
        next[index] = { kind: "display", data: event.data, displayId: event.displayId, ...(event.cut && { cut: keptCuts(event.cut) }) };
      }
      continue;
    }
    // An event that adds no item (progress, done) leaves the open block open: it would
    // otherwise split the text around it into blocks the cap does not see coming.
    const item = eventItem(event);
    if (!item) continue;
    blocks.item(item);
    if (withId && item.kind === "display" && item.displayId !== undefined) {
      withId.set(item.displayId, [...(withId.get(item.displayId) ?? []), next.length - 1]);
    }
  }
  blocks.finish();
  return next;
}

/** The index of each display with an id, by id. */
function displaysWithId(items: readonly OutputItem[]): Map<string, number[]> {
  const found = new Map<string, number[]>();
  items.forEach((item, index) => {
    if (item.kind === "display" && item.displayId !== undefined) found.set(item.displayId, [...(found.get(item.displayId) ?? []), index]);
  });
  return found;
}

/** The item a worker event other than stream text adds, if any. */
function eventItem(event: Exclude<WorkerEvent, { type: "stream" }>): OutputItem | undefined {
  switch (event.type) {
    case "display":
      return {
        kind: "display",
        data: event.data,
        ...(event.cut && { cut: keptCuts(event.cut) }),
        ...(event.displayId !== undefined && { displayId: event.displayId }),
      };
    case "input-request":
      return { kind: "input", prompt: capPrompt(event.prompt) };
    case "truncated":
      return {
        kind: "notice",
        tone: "warning",
        text: `Output truncated: this run printed more than ${formatBytes(event.limitBytes)}; the rest is not shown.`,
      };
    case "progress":
    case "done":
    case "fatal":
    case "update-display":
    case "clear-output":
      return undefined;
  }
}
/** Cuts as an output keeps them, files as Blobs (as capBundle has made them already). */
function keptCuts(cuts: SentCuts): KeptCuts {
  const kept: KeptCuts = {};
  for (const [mime, { file, ...rest }] of Object.entries(cuts)) kept[mime] = { ...rest, ...(file && { file: asFile(file) }) };
  return kept;
}

/** Record the person's answer to the pending `input()` prompt. */
export function answerInput(items: readonly OutputItem[], answer: string): OutputItem[] {
  const index = items.findLastIndex((item) => item.kind === "input" && item.answer === undefined);
  if (index < 0) return [...items];
  return items.map((item, i) => (i === index ? { ...item, answer } : item));
}

/** Close a run: its value, its error, and a line saying how it ended when that is news. */
export function applyResult(items: readonly OutputItem[], result: RunOutcome): OutputItem[] {
  // An unanswered prompt stays visible but can no longer be answered.
  const next: OutputItem[] = items.map((item) =>
    item.kind === "input" && item.answer === undefined ? { ...item, answer: "" } : item,
  );
  if (result.ranOn) next.unshift({ kind: "notice", tone: "sandbox", text: ranElsewhereBadge(result.ranOn) });
  if (result.value) next.push({ kind: "value", data: result.value, ...(result.valueCut && { cut: keptCuts(result.valueCut) }) });
  if (result.error && ((result.status !== "interrupted" && result.status !== "timeout") || result.ranOn)) {
    next.push({ kind: "error", error: result.error });
  }
  for (const note of result.ranOn?.notes ?? []) next.push({ kind: "notice", tone: "warning", text: note });
  if (result.variablesNotKept) next.push({ kind: "notice", tone: "warning", text: variablesNotKeptLine(result.variablesNotKept) });
  const line = statusLine(result);
  if (line) next.push({ kind: "notice", tone: result.status === "ok" ? "info" : "warning", text: line });
  return next;
}

/** The badge of a run that happened elsewhere than in the browser. */
export const ranElsewhereBadge = (ranOn: RanElsewhere) => `Ran on ${ranOn.label} — ${ranOn.reason}`;

/** A sentence about how a run ended, or undefined when it simply succeeded. */
export function statusLine(result: RunOutcome): string | undefined {
  const restored = result.restored
    ? ` Variables restored: ${nameList(result.restored.kept) || "none"}.` +
      (result.restored.lost.length ? ` Lost: ${nameList(result.restored.lost)}.` : "")
    : "";
  switch (result.status) {
    case "ok":
      return result.exitCode !== undefined ? `Exited with code ${result.exitCode}.` : undefined;
    case "error":
      return result.exitCode !== undefined ? `Exited with code ${result.exitCode}.` : undefined;
    case "interrupted":
    case "timeout": {
      if (result.notStarted) return "Stopped before it started.";
      const what = result.status === "timeout" ? "Timed out" : "Interrupted";
      if (result.restarted) return `${what} after ${formatDuration(result.durationMs)}. Python was restarted: its variables are cleared.`;
      if (result.ranOn) return `${what} after ${formatDuration(result.durationMs)}.`;
      const how = restored ? " Python did not stop, so it was restarted." : " Variables are kept.";
      return `${what} after ${formatDuration(result.durationMs)}.${how}${restored}`;
    }
    case "crashed":
      return `Python crashed: ${result.error?.evalue ?? "the worker stopped"}.${restored}`;
    case "unavailable":
      if (result.ranOn) return `Not run: ${result.error?.evalue ?? `${result.ranOn.label} is unavailable.`}`;
      return `Not run: ${result.missingModules?.join(", ") || "a module"} cannot be loaded in the browser.`;
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/**
 * A moment in local time, as `2026-12-01 09:05`. Written out by hand: the page's first use of
 * `Intl` (which `toLocaleString` is) loads its locale data, a 35–70 ms task on the main thread.
 */
export function formatLocalTime(ms: number): string {
  const date = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The most variable names a sentence lists; the rest are counted. */
export const NAMES_LISTED = 20;

/**
 * Variable names from the worker, for a sentence on the page: at most {@link NAMES_LISTED}
 * Python identifiers as they are, and the rest (also anything that is not an identifier, such
 * as a name Python made up to pass for Kiln's own words) only counted.
 */
export function nameList(names: readonly string[]): string {
  const shown: string[] = [];
  for (const name of names) {
    if (shown.length === NAMES_LISTED) break;
    if (/^[A-Za-z_][A-Za-z0-9_]{0,79}$/.test(name)) shown.push(name);
  }
  const others = names.length - shown.length;
  if (!others) return shown.join(", ");
  const counted = `${grouped(others)} other${others > 1 ? "s" : ""}`;
  return shown.length ? `${shown.join(", ")} and ${counted}` : counted;
}

/** Why variables past the limit are not kept. */
export const variablesLimit = () =>
  `Kiln keeps at most ${grouped(MAX_SAVED_VARIABLES)} variables of a conversation (and of the Playground) for when Python restarts or the page reloads.`;

/** Said once, when a run's variables go past the limit of saved ones. */
export function variablesNotKeptLine(count: number): string {
  return `${grouped(count)} variable${count > 1 ? "s" : ""} not kept: ${variablesLimit()} The others stay in Python until then.`;
}
