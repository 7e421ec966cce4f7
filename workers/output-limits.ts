import type { MimeBundle } from "./python-api";

/**
 * How much of a run's rich output (displays and the last value) is kept with it, shown and
 * saved. The worker applies these where output is made, and the page again where it receives
 * and shows it, and where it reads saved output back (see docs/output-limits.md). Sizes are
 * counted in characters (UTF-16 code units, as JavaScript measures strings).
 */

/** A text representation (HTML, SVG, Markdown, JSON, plain text…) keeps at most this much. */
export const DISPLAY_TEXT_CHARS = 100_000;
/** A base64 image (PNG, JPEG) larger than this is kept only as a file. */
export const DISPLAY_IMAGE_CHARS = 8 * 1024 * 1024;
/** Everything a run's displays and value keep, together; past it they are kept only as files. */
export const RUN_DISPLAY_CHARS = 16 * 1024 * 1024;
/** The files a run keeps of values past the limits, together; a value past this is not kept. */
export const RUN_FILE_CHARS = 128 * 1024 * 1024;

/** The longest display id kept (`display(obj, display_id=…)`); a longer one is cut to it. */
export const DISPLAY_ID_CHARS = 200;

/** A bundle keeps at most this many representations; the rest are dropped, counted in one notice. */
export const BUNDLE_ENTRIES = 32;
/** A MIME type longer than this is not one: its representation is dropped. */
export const MIME_TYPE_CHARS = 100;
/** What each representation costs the run's budget beside its key and text. */
export const ENTRY_OVERHEAD_CHARS = 64;
/**
 * The key of a bundle's cuts under which it counts the representations it dropped (their keys
 * are not MIME types, or they came past {@link BUNDLE_ENTRIES}); its `chars` is their number.
 */
export const DROPPED_KEY = "*/*";

const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/**
 * A bundle key as a MIME type: parameters dropped, trimmed and lower-cased (as exports clean
 * them); undefined when it is not `type/subtype` of at most {@link MIME_TYPE_CHARS} characters.
 */
export function mimeType(key: string): string | undefined {
  if (key.length > MIME_TYPE_CHARS * 2) return undefined;
  const mime = key.split(";")[0].trim().toLowerCase();
  return mime.length <= MIME_TYPE_CHARS && MIME_TYPE.test(mime) ? mime : undefined;
}

/** What one representation costs the run's budget: its key, its text and {@link ENTRY_OVERHEAD_CHARS}. */
export const entryChars = (key: string, text: string): number => key.length + text.length + ENTRY_OVERHEAD_CHARS;

/** Representations whose text is base64 of binary data: cut, they are useless, so none of them stays. */
export const BINARY_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg"]);

/** A representation that went past its limit: its whole length, and whether it is kept whole as a file. */
export interface Cut<File> {
  /** Its length in characters before it was cut. */
  chars: number;
  /** The whole value, to download; absent when the run had already kept {@link RUN_FILE_CHARS}. */
  file?: File;
  /** The file holds the image's base64 text, not its bytes (made on the page, which does not decode large images). */
  base64?: true;
}

/** The cut representations of a bundle, by MIME type. */
export type Cuts<File> = Record<string, Cut<File>>;

/**
 * A bundle within the limits, and what was cut from it; `whole` holds the full text of each cut
 * value that is to be kept; `dropped` counts the representations dropped whole.
 */
export interface Capped {
  data: MimeBundle;
  cut: Record<string, { chars: number; whole?: string }>;
  dropped: number;
}

/**
 * One run's budget: each representation is cut to its own limit and to what the run has left,
 * and what is cut is kept whole while the run's files stay under {@link RUN_FILE_CHARS}.
 */
export class RunLimits {
  private shown = 0;
  private filed = 0;

  /** Count a file that arrived already made (the page counts the worker's files), true when it fits. */
  takeFile(chars: number): boolean {
    if (this.filed + chars > RUN_FILE_CHARS) return false;
    this.filed += chars;
    return true;
  }

  cap(bundle: MimeBundle): Capped {
    const data: MimeBundle = {};
    const cut: Capped["cut"] = {};
    let dropped = 0;
    let entries = 0;
    for (const [key, text] of Object.entries(bundle)) {
      const mime = mimeType(key);
      if (mime === undefined || Object.hasOwn(data, mime) || Object.hasOwn(cut, mime) || entries >= BUNDLE_ENTRIES) {
        dropped += 1;
        continue;
      }
      entries += 1;
      // The key and the entry itself are paid for first: a flood of tiny entries uses up the budget too.
      this.shown = Math.min(RUN_DISPLAY_CHARS, this.shown + entryChars(mime, ""));
      const binary = BINARY_TYPES.has(mime);
      const limit = Math.min(binary ? DISPLAY_IMAGE_CHARS : DISPLAY_TEXT_CHARS, RUN_DISPLAY_CHARS - this.shown);
      if (text.length <= limit) {
        data[mime] = text;
        this.shown += text.length;
        continue;
      }
      if (!binary && limit > 0) {
        // Not in the middle of a surrogate pair.
        const end = /[\uD800-\uDBFF]/.test(text[limit - 1]) ? limit - 1 : limit;
        data[mime] = text.slice(0, end);
        this.shown += end;
      }
      cut[mime] = { chars: text.length, ...(this.takeFile(text.length) ? { whole: text } : {}) };
    }
    return { data, cut, dropped };
  }
}

/** What the first `chars` characters of a cut value hold, in words, for the person and the model. */
export function cutSummary(mime: string, chars: number, kept: number, file: boolean): string {
  if (mime === DROPPED_KEY) return droppedSummary(chars);
  const named = mimeType(mime);
  const what = `${KIND_NAMES[mime] ?? named ?? "unnamed"} output`;
  const size = `${groupDigits(chars)} character${chars === 1 ? "" : "s"}`;
  const shown = kept ? `only its first ${groupDigits(kept)} are kept with the output` : "none of it is kept with the output";
  const whole = file ? "the whole value is kept as a file to download" : `it was not kept: the run had already kept ${RUN_FILE_CHARS / 1024 / 1024} MiB of such files`;
  return `This ${what} is ${size}, over the limit: ${shown}, and ${whole}.`;
}

/** The notice for representations a bundle dropped whole. */
export function droppedSummary(count: number): string {
  const what = count === 1 ? "1 representation of this output was" : `${groupDigits(count)} representations of this output were`;
  return `${what} dropped: an output keeps at most ${BUNDLE_ENTRIES}, each named by a MIME type (such as text/plain) of at most ${MIME_TYPE_CHARS} characters.`;
}

/** 12000000 as "12,000,000" (without `Intl`, whose first use loads locale data on the page's thread). */
export function groupDigits(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+$)/g, ",");
}

const KIND_NAMES: Record<string, string> = {
  "text/html": "HTML",
  "image/svg+xml": "SVG",
  "text/markdown": "Markdown",
  "text/plain": "text",
  "application/json": "JSON",
  "text/latex": "LaTeX",
  "image/png": "PNG",
  "image/jpeg": "JPEG",
};

/** The file name a cut value downloads as. */
export function cutFileName(mime: string, base64 = false): string {
  return `output.${EXTENSIONS[mime] ?? "txt"}${base64 ? ".base64" : ""}`;
}

const EXTENSIONS: Record<string, string> = {
  "text/html": "html",
  "image/svg+xml": "svg",
  "text/markdown": "md",
  "application/json": "json",
  "text/latex": "tex",
  "image/png": "png",
  "image/jpeg": "jpg",
};
