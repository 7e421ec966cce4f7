import type { MimeBundle, PythonError, RunResult, StreamName } from "../../workers/python-api";
import type { Cuts } from "../../workers/output-limits";

/** What was cut from a display or value to the output limits, with each whole value as a file (see docs/output-limits.md). */
export type KeptCuts = Cuts<Blob>;

/** What a run shows, in order. Plain data (and Blobs): it is saved as is. */
export type OutputItem =
  | { kind: "stream"; name: StreamName; text: string }
  /** `displayId`: the id Python gave it, by which a later update of the same run replaces it. */
  | { kind: "display"; data: MimeBundle; cut?: KeptCuts; displayId?: string }
  | { kind: "value"; data: MimeBundle; cut?: KeptCuts }
  | { kind: "error"; error: PythonError }
  | { kind: "input"; prompt: string; answer?: string }
  /** `sandbox`: the badge of a run that happened somewhere other than the browser. */
  | { kind: "notice"; tone: "info" | "warning" | "sandbox"; text: string };

/** Where a run happened when it was not the browser: shown as a badge, told to the model. */
export interface RanElsewhere {
  /** Who ran it, in words: "Anthropic's sandbox". */
  label: string;
  /** Why it ran there, e.g. "torch is not available in the browser". */
  reason: string;
  /** What the person should know: a new sandbox, changed code, files brought back. */
  notes: string[];
  /** Variables set there do not persist between runs. */
  stateless?: boolean;
}

/** A run's result, with where it ran when that was not the browser (added on the page side). */
export interface RunOutcome extends RunResult {
  ranOn?: RanElsewhere;
}
