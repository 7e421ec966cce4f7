import type { MimeBundle, SentCuts } from "../../workers/python-api";
import { BINARY_TYPES, BUNDLE_ENTRIES, DISPLAY_TEXT_CHARS, DROPPED_KEY, RunLimits, mimeType } from "../../workers/output-limits";
import type { KeptCuts, OutputItem } from "../model/output";
import { capError, capPrompt, keepStart, NOTICE_CHARS } from "../../workers/text-limits";
import { streamBlocks } from "../model/stream-blocks";

/** The type of every file of a cut value: one the browser never renders (opened, HTML would run as the app). */
const FILE_TYPE = "application/octet-stream";

/** A cut value's file as the page keeps it: a Blob of {@link FILE_TYPE}. */
export const asFile = (file: Blob | Uint8Array): Blob =>
  file instanceof Blob && file.type === FILE_TYPE ? file : new Blob([file as Uint8Array<ArrayBuffer>], { type: FILE_TYPE });

/**
 * A bundle as the page keeps it: within `limits` whatever the sender did, with the files the
 * sender made of what it cut (counted against the run's files too) and files of what the page
 * cuts itself.
 */
export function capBundle(limits: RunLimits, bundle: MimeBundle, sent?: SentCuts): { data: MimeBundle; cut?: KeptCuts } {
  const { data, cut, dropped } = limits.cap(bundle);
  const kept: KeptCuts = {};
  let droppedBefore = 0;
  for (const [key, { chars, file, base64 }] of Object.entries(sent ?? {})) {
    if (key === DROPPED_KEY) {
      droppedBefore = chars;
      continue;
    }
    const mime = mimeType(key);
    // The sender's cuts are bounded as its bundles are: only MIME types, at most as many as a bundle keeps.
    if (mime === undefined || Object.hasOwn(kept, mime) || Object.keys(kept).length >= BUNDLE_ENTRIES) {
      droppedBefore += 1;
      continue;
    }
    const size = file instanceof Blob ? file.size : (file?.byteLength ?? 0);
    kept[mime] = { chars, ...(file && limits.takeFile(size) ? { file: asFile(file), ...(base64 && { base64 }) } : {}) };
  }
  for (const [mime, { chars, whole }] of Object.entries(cut)) {
    const earlier = kept[mime];
    const file = earlier?.file ? earlier : whole !== undefined ? { file: asFile(new Blob([whole])), ...(BINARY_TYPES.has(mime) && { base64: true as const }) } : {};
    kept[mime] = { chars: Math.max(chars, earlier?.chars ?? 0), ...file };
  }
  const droppedAll = Math.min(droppedBefore + dropped, Number.MAX_SAFE_INTEGER);
  if (droppedAll) kept[DROPPED_KEY] = { chars: droppedAll };
  return Object.keys(kept).length ? { data, cut: kept } : { data };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The well-formed cuts of a stored item (older versions stored none). */
function storedCuts(value: unknown): SentCuts | undefined {
  if (!isRecord(value)) return undefined;
  const cuts: SentCuts = {};
  for (const [mime, cut] of Object.entries(value)) {
    if (!isRecord(cut) || !Number.isSafeInteger(cut.chars)) continue;
    cuts[mime] = { chars: cut.chars as number, ...(cut.file instanceof Blob && { file: cut.file }), ...(cut.base64 === true && { base64: true }) };
  }
  return cuts;
}

/**
 * One run's saved output within the limits, as read from storage: output saved by an older
 * version (or written there by anything else) may hold displays of any size, and any number
 * of blocks of text; past the cap of stream blocks they are joined as a run joins them.
 */
export function capStoredOutputs(items: readonly OutputItem[]): OutputItem[] {
  const limits = new RunLimits();
  const next: OutputItem[] = [];
  const blocks = streamBlocks(next);
  for (const item of items) {
    if (item.kind === "stream" && typeof item.text === "string") blocks.stream(item.name, item.text);
    else if (item.kind !== "display" && item.kind !== "value") blocks.item(cappedText(item));
    else {
      const bundle: MimeBundle = {};
      for (const [mime, text] of Object.entries(isRecord(item.data) ? item.data : {})) if (typeof text === "string") bundle[mime] = text;
      const { data, cut } = capBundle(limits, bundle, storedCuts(item.cut));
      blocks.item({ kind: item.kind, data, ...(cut && { cut }) });
    }
  }
  blocks.finish();
  return next;
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** A saved error, prompt or notice within the limits (Python chose the first two, and a notice may quote an error). */
function cappedText(item: OutputItem): OutputItem {
  switch (item.kind) {
    case "error": {
      const error: Record<string, unknown> = isRecord(item.error) ? item.error : {};
      return { kind: "error", error: capError({ ename: text(error.ename), evalue: text(error.evalue), traceback: text(error.traceback) }) };
    }
    case "input":
      return { kind: "input", prompt: capPrompt(text(item.prompt)), ...(typeof item.answer === "string" && { answer: keepStart(item.answer, DISPLAY_TEXT_CHARS) }) };
    case "notice":
      return { ...item, text: keepStart(text(item.text), NOTICE_CHARS) };
    default:
      return item;
  }
}
