import type { MimeBundle } from "../../workers/python-api";
import type { OutputItem } from "../model/output";

/** A JSON object of a notebook file (an output, a cell). */
export type NbJson = Record<string, unknown>;

/** Text as nbformat holds it: a list of lines, each but the last ending with its "\n" (none for ""). */
export const nbLines = (text: string): string[] => text.split(/(?<=\n)/).filter((line) => line !== "");

/** Representations nbformat holds as base64 strings, whole. */
const BASE64_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"]);

/** A MIME type whose nbformat value is JSON itself (an object, a list…), not text. */
export const isJsonType = (mime: string): boolean => mime === "application/json" || /\+json$/.test(mime);

/** A bundle as nbformat holds it: JSON types as JSON, base64 images as one string, text as lines. */
function nbBundle(data: MimeBundle): NbJson {
  return Object.fromEntries(
    Object.entries(data).map(([mime, value]): [string, unknown] => {
      if (isJsonType(mime)) {
        try {
          return [mime, JSON.parse(value)];
        } catch {
          return [mime, nbLines(value)];
        }
      }
      return [mime, BASE64_TYPES.has(mime) ? value : nbLines(value)];
    }),
  );
}

/**
 * A run's outputs as nbformat 4 outputs, every bundle passed through `clean` (the export cleaner).
 * Kiln's own items become stream text: an `input()` prompt and its answer as stdout, as a terminal
 * shows them; a notice (a cut, where the code ran) as stderr.
 */
export function nbOutputs(outputs: readonly OutputItem[], executionCount: number | null, clean: (data: MimeBundle) => MimeBundle): NbJson[] {
  const result: NbJson[] = [];
  for (const item of outputs) {
    if (item.kind === "stream") result.push({ output_type: "stream", name: item.name, text: nbLines(item.text) });
    else if (item.kind === "display") result.push({ output_type: "display_data", data: nbBundle(clean(item.data)), metadata: {} });
    else if (item.kind === "value") {
      result.push({ output_type: "execute_result", data: nbBundle(clean(item.data)), metadata: {}, execution_count: executionCount });
    } else if (item.kind === "error") {
      const { ename, evalue, traceback } = item.error;
      result.push({ output_type: "error", ename, evalue, traceback: traceback.split("\n") });
    } else if (item.kind === "input") {
      result.push({ output_type: "stream", name: "stdout", text: nbLines(`${item.prompt}${item.answer ?? ""}\n`) });
    } else if (item.kind === "notice") {
      result.push({ output_type: "stream", name: "stderr", text: nbLines(`${item.text}\n`) });
    }
  }
  return result;
}
