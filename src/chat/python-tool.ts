import type { RunResult } from "../../workers/python-api";
import { WORKING_DIRECTORY } from "../../workers/file-paths";
import type { OutputItem } from "../runtime/output-model";
import { statusLine } from "../runtime/output-model";
import type { ToolSpec } from "../providers/anthropic/client";
import type { ImageBlock, TextBlock, ToolResultBlock } from "./types";

export const PYTHON_TOOL_NAME = "python";
/** Text sent back to the model per tool call; the rest is cut with a notice. */
export const TOOL_RESULT_TEXT_LIMIT = 20_000;

export function pythonTool(pythonVersion: string, network: boolean): ToolSpec {
  return {
    name: PYTHON_TOOL_NAME,
    description: [
      `Runs Python ${pythonVersion} (Pyodide, WebAssembly) in the person's browser tab and returns what it printed.`,
      "State persists across calls in this conversation: variables, functions and imports stay defined.",
      `The working directory is ${WORKING_DIRECTORY}; the person's uploaded files are there.`,
      "The value of the last expression is returned, as in a notebook cell (end the line with ';' to suppress it).",
      "Show figures with matplotlib (every open figure is returned as an image at the end of the run, and on plt.show()) or display(obj).",
      "Packages from Pyodide's index (numpy, pandas, matplotlib, scipy, scikit-learn, sympy, and ~350 more) load automatically when imported; pip is not available.",
      "Top-level await works. input() is not available: nobody answers it.",
      network
        ? "The person allowed network access for this conversation: fetch works for URLs that send CORS headers."
        : "There is no network access: the browser blocks every connection from Python (the person can allow it for this conversation). Package imports still work.",
      "Code that imports a library the browser cannot load (such as torch) runs on Anthropic's code execution sandbox instead; the result says so.",
      "The sandbox keeps its own variables and files between such runs, separate from the browser's: pass data between them through files.",
    ].join(" "),
    input_schema: {
      type: "object",
      properties: { code: { type: "string", description: "The Python code to run." } },
      required: ["code"],
    },
  };
}

/** The code of a tool call's input, or undefined when the input is not usable. */
export function codeOf(input: unknown): string | undefined {
  const code = (input as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A run's outputs as a tool result: text for everything, images as image blocks. */
export function toolResult(toolUseId: string, outputs: readonly OutputItem[], result: RunResult): ToolResultBlock {
  const parts: string[] = [];
  const images: ImageBlock[] = [];
  let stdout = "";
  let stderr = "";
  for (const item of outputs) {
    if (item.kind === "stream") {
      if (item.name === "stdout") stdout += item.text;
      else stderr += item.text;
    } else if (item.kind === "display" || item.kind === "value") {
      const data = item.data;
      const image = data["image/png"] ? "image/png" : data["image/jpeg"] ? "image/jpeg" : undefined;
      if (image && !isSendableImage(image, data[image])) {
        parts.push(`[${item.kind === "value" ? "result" : "display"}: an image that is not a valid ${image} under 5 MB was left out]`);
      } else if (image) {
        images.push({ type: "image", source: { type: "base64", media_type: image, data: data[image] } });
        parts.push(`[${item.kind === "value" ? "result" : "display"}: image ${images.length} attached]`);
      } else {
        const label = item.kind === "value" ? "result" : "display";
        parts.push(`${label}: ${data["text/markdown"] ?? data["text/plain"] ?? Object.keys(data).join(", ")}`);
      }
    } else if (item.kind === "notice" && item.tone !== "sandbox") {
      parts.push(`[${item.text}]`);
    }
  }
  const sections = [`status: ${result.status} (${Math.round(result.durationMs)} ms)`];
  if (result.sandbox) {
    sections.push(
      `[Ran on Anthropic's sandbox, not in the browser: ${result.sandbox.reason}. ` +
        "Variables set there exist only in the sandbox, not in the browser interpreter.]",
    );
  }
  if (stdout) sections.push(`stdout:\n${stdout}`);
  if (stderr) sections.push(`stderr:\n${stderr}`);
  sections.push(...parts);
  if (result.error) sections.push(`error:\n${result.error.traceback || `${result.error.ename}: ${result.error.evalue}`}`);
  const line = statusLine(result);
  if (line && result.status !== "ok") sections.push(line);
  let text = sections.join("\n");
  if (text.length > TOOL_RESULT_TEXT_LIMIT) {
    text = `${text.slice(0, TOOL_RESULT_TEXT_LIMIT)}\n[output cut: ${text.length - TOOL_RESULT_TEXT_LIMIT} more characters not shown]`;
  }
  const content: (TextBlock | ImageBlock)[] = [{ type: "text", text }, ...images];
  return { type: "tool_result", tool_use_id: toolUseId, content, ...(result.status === "ok" ? {} : { is_error: true }) };
}

/** Whether base64 `data` is a real PNG or JPEG the API accepts (at most 5 MB). */
function isSendableImage(type: string, data: string): boolean {
  if (data.length > (5 * 1024 * 1024 * 4) / 3 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return false;
  return type === "image/png" ? data.startsWith("iVBORw0KGgo") : data.startsWith("/9j/");
}
