import type { SentCuts, WorkerEvent } from "../../workers/python-api";
import { BUNDLE_ENTRIES, cutSummary, mimeType } from "../../workers/output-limits";
import { WORKING_DIRECTORY } from "../../workers/file-paths";
import type { ImageBlock, TextBlock, ToolResultBlock } from "../model/conversation";
import type { RunOutcome } from "../model/output";
import { formatBytes, statusLine, variablesNotKeptLine } from "../runtime/output-model";
import { MAX_RUN_OUTPUTS } from "../runtime/run-owner";
import type { ToolSpec } from "./provider";

export const PYTHON_TOOL_NAME = "python";
/** Text sent back to the model per tool call; the rest is cut with a notice. */
export const TOOL_RESULT_TEXT_LIMIT = 20_000;
/** Outputs cut to the output limits that a tool result names one by one; the rest are counted. */
const MAX_CUTS_TOLD = 10;
/** The characters those lines take together, at most (beside the line counting the rest). */
export const CUTS_TOLD_CHARS = 2_000;

/** Modules of the Jupyter server named in the tool's description, at most. */
export const JUPYTER_MODULES_TOLD = 400;

/** The `python` tool; `sandbox` (or the person's Jupyter server, before it) names where code the browser cannot run goes, if anywhere. */
export function pythonTool(
  pythonVersion: string,
  network: boolean,
  sandbox?: { label: string; stateless?: boolean },
  jupyter?: { label: string; modules?: readonly string[] },
): ToolSpec {
  return {
    name: PYTHON_TOOL_NAME,
    description: [
      `Runs Python ${pythonVersion} (Pyodide, WebAssembly) in the person's browser tab and returns what it printed.`,
      "State persists across calls in this conversation: variables, functions and imports stay defined.",
      `The working directory is ${WORKING_DIRECTORY}; the person's uploaded files are there.`,
      "The value of the last expression is returned, as in a notebook cell (end the line with ';' to suppress it).",
      "Show figures with matplotlib (every open figure is returned as an image at the end of the run, and on plt.show()) or display(obj).",
      "Packages from Pyodide's index (numpy, pandas, matplotlib, scipy, scikit-learn, sympy, and ~350 more) load automatically when imported (`%pip install name` loads one by name).",
      "IPython's display API works without installing anything: `from IPython.display import display, Markdown, HTML, Latex, Math, JSON, Image, clear_output`; display(obj, display_id=True) returns a handle whose .update(obj) replaces that output.",
      "IPython magics work: %time, %timeit, %%time, %%timeit, %%writefile, %pwd, %cd, %ls, %env, %who, %whos, %history, %reset -f, and obj? for help; there is no shell, so !cmd runs nothing.",
      "Top-level await works. input() is not available: nobody answers it.",
      network
        ? "The person allowed network access for this conversation: fetch works for URLs that send CORS headers."
        : "There is no network access: the browser blocks every connection from Python (the person can allow it for this conversation). Package imports still work.",
      ...(jupyter
        ? [
            `Code that imports a library the browser cannot load runs on ${jupyter.label} (the person's own, through a Jupyter kernel) instead; the result says so. ` +
              "That kernel keeps its own variables between such runs, separate from the browser's; the person's files are in its working directory, and files it writes there come back.",
            ...(jupyter.modules?.length
              ? [
                  `Top-level modules ${jupyter.label} has: ${jupyter.modules.slice(0, JUPYTER_MODULES_TOLD).join(", ")}` +
                    (jupyter.modules.length > JUPYTER_MODULES_TOLD ? ` and ${jupyter.modules.length - JUPYTER_MODULES_TOLD} more.` : "."),
                ]
              : []),
          ]
        : sandbox
        ? [
            `Code that imports a library the browser cannot load (such as torch) runs on ${sandbox.label} instead; the result says so.`,
            sandbox.stateless
              ? "Nothing persists there between runs, and its variables are not the browser's."
              : "The sandbox keeps its own variables and files between such runs, separate from the browser's: pass data between them through files.",
          ]
        : ["Only the standard library and Pyodide's packages can be imported: a library outside them cannot run here."]),
    ].join(" "),
    parameters: {
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

/** A run as a tool result, from its events and outcome: text for everything, images as image blocks. */
export function toolResult(callId: string, run: { outcome: RunOutcome; events: readonly WorkerEvent[]; droppedOutputs?: number }): ToolResultBlock {
  const { outcome } = run;
  const parts: string[] = [];
  const images: ImageBlock[] = [];
  let stdout = "";
  let stderr = "";
  /** What was cut from displays and the value: told after the text, which may itself be cut. */
  const cuts: string[] = [];
  const addBundle = (label: "result" | "display", data: Record<string, string>, cut: SentCuts = {}) => {
    const image = data["image/png"] ? "image/png" : data["image/jpeg"] ? "image/jpeg" : undefined;
    if (image && !isSendableImage(image, data[image])) {
      parts.push(`[${label}: an image that is not a valid ${image} under 5 MB was left out]`);
    } else if (image) {
      images.push({ type: "image", mediaType: image, data: data[image] });
      parts.push(`[${label}: image ${images.length} attached]`);
    } else {
      parts.push(`${label}: ${data["text/markdown"] ?? data["text/plain"] ?? (typeNames(data) || typeNames(cut))}`);
    }
    for (const [mime, { chars, file }] of Object.entries(cut)) {
      const source = mime === "text/html" || mime === "image/svg+xml" ? " The person sees it as source text, not rendered." : "";
      cuts.push(`[${label}: ${cutSummary(mime, chars, data[mime]?.length ?? 0, file !== undefined)}${source}]`);
    }
  };
  for (const event of run.events) {
    if (event.type === "stream") {
      if (event.name === "stdout") stdout += event.text;
      else stderr += event.text;
    } else if (event.type === "display") {
      addBundle("display", event.data, event.cut);
    } else if (event.type === "truncated") {
      parts.push(`[Output truncated: this run printed more than ${formatBytes(event.limitBytes)}; the rest is not shown.]`);
    }
  }
  if (run.droppedOutputs) parts.push(`[${run.droppedOutputs} more outputs not shown: a run shows at most ${MAX_RUN_OUTPUTS}.]`);
  if (outcome.value) addBundle("result", outcome.value, outcome.valueCut);
  for (const note of outcome.ranOn?.notes ?? []) parts.push(`[${note}]`);
  if (outcome.variablesNotKept) parts.push(`[${variablesNotKeptLine(outcome.variablesNotKept)}]`);
  const sections = [`status: ${outcome.status} (${Math.round(outcome.durationMs)} ms)`];
  if (outcome.ranOn) {
    sections.push(
      `[Ran on ${outcome.ranOn.label}, not in the browser: ${outcome.ranOn.reason}. ` +
        (outcome.ranOn.stateless
          ? "Nothing persists there between runs: variables set there are gone, and they never exist in the browser interpreter.]"
          : "Variables set there exist only in the sandbox, not in the browser interpreter.]"),
    );
  }
  if (stdout) sections.push(`stdout:\n${stdout}`);
  if (stderr) sections.push(`stderr:\n${stderr}`);
  sections.push(...parts);
  if (outcome.error) sections.push(`error:\n${outcome.error.traceback || `${outcome.error.ename}: ${outcome.error.evalue}`}`);
  const line = statusLine(outcome);
  if (line && outcome.status !== "ok") sections.push(line);
  let text = sections.join("\n");
  if (text.length > TOOL_RESULT_TEXT_LIMIT) {
    text = `${text.slice(0, TOOL_RESULT_TEXT_LIMIT)}\n[output cut: ${text.length - TOOL_RESULT_TEXT_LIMIT} more characters not shown]`;
  }
  if (cuts.length) {
    // Told after the cut text, so bounded on their own: by number and by length.
    const told: string[] = [];
    let length = 0;
    for (const cut of cuts.slice(0, MAX_CUTS_TOLD)) {
      if (length + cut.length > CUTS_TOLD_CHARS) break;
      told.push(cut);
      length += cut.length + 1;
    }
    if (cuts.length > told.length) told.push(`[${cuts.length - told.length} more outputs were cut to the limits as well.]`);
    text += `\n${told.join("\n")}`;
  }
  const content: (TextBlock | ImageBlock)[] = [{ type: "text", text }, ...images];
  return { type: "tool_result", callId, content, ...(outcome.status === "ok" ? {} : { isError: true }) };
}

/** A bundle's MIME types, named only when well formed, at most as many as a bundle keeps. */
function typeNames(bundle: object): string {
  return Object.keys(bundle)
    .filter((key) => mimeType(key) === key)
    .slice(0, BUNDLE_ENTRIES)
    .join(", ");
}

/** Whether base64 `data` is a real PNG or JPEG the API accepts (at most 5 MB). */
function isSendableImage(type: string, data: string): boolean {
  if (data.length > (5 * 1024 * 1024 * 4) / 3 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return false;
  return type === "image/png" ? data.startsWith("iVBORw0KGgo") : data.startsWith("/9j/");
}
