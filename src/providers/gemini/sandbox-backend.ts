import type { Part } from "@google/genai";
import type { BackendRun, ExecutionBackend, RunOutcome } from "../../execution/backend";
import { changedCodeNote, filesUsedBy, sandboxRun, type Failure } from "../../execution/sandbox-run";
import { errorFromStderr } from "../../execution/traceback";
import { client, describe, type GeminiSettings } from "./client";

export const SANDBOX_LABEL = "Gemini's sandbox";

/** Files sent along inline; larger ones are left out (the request has a size limit). */
const MAX_INLINE_BYTES = 15 * 1024 * 1024;

const SYSTEM =
  "You are the code runner of Kiln, an app that runs a person's Python. Run exactly the code you are given with code " +
  "execution, once, unchanged, and nothing else. Do not explain: when it has run, answer with the single word Done.";

function base64(data: Uint8Array): string {
  let text = "";
  for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return btoa(text);
}

const mimeOf = (name: string) =>
  /\.csv$/i.test(name) ? "text/csv" : /\.(txt|py|md|json)$/i.test(name) ? "text/plain" : /\.png$/i.test(name) ? "image/png" : "application/octet-stream";

/**
 * Gemini's code execution as an execution backend. It keeps nothing between runs: each run
 * starts fresh, with the person's files it names sent along inline, for at most about 30 s.
 */
export function geminiSandbox(settings: GeminiSettings, model: string): ExecutionBackend {
  return { label: SANDBOX_LABEL, stateless: true, run: (code, run) => runOnce(code, run, settings, model) };
}

async function runOnce(code: string, run: BackendRun, settings: GeminiSettings, model: string): Promise<RunOutcome> {
  return sandboxRun(SANDBOX_LABEL, run, { stateless: true, failure: failure(settings) }, async ({ signal, notes, finish, fail }) => {
    notes.push("Gemini's sandbox keeps nothing between runs: variables set there are gone after this run.");
    const files: Part[] = [];
    const names: string[] = [];
    for (const file of filesUsedBy(code, await run.session.listFiles(), MAX_INLINE_BYTES)) {
      const name = file.path.split("/").pop()!;
      names.push(name);
      files.push({ inlineData: { mimeType: mimeOf(name), data: base64(await run.session.readFile(file.path)), displayName: name } });
    }
    const attached = names.length ? `\n\nThe attached files are, in order: ${names.join(", ")}.` : "";
    const response = await (await client(settings)).models.generateContent({
      model,
      contents: [
        {
          role: "user",
          parts: [{ text: `Run this Python code with code execution, exactly as written, once:\n\n\`\`\`python\n${code}\n\`\`\`${attached}` }, ...files],
        },
      ],
      config: { systemInstruction: SYSTEM, tools: [{ codeExecution: {} }], abortSignal: signal },
    });
    const ran: string[] = [];
    let outcome: string | undefined;
    let output = "";
    const figures: { type: string; data: string }[] = [];
    for (const part of response.candidates?.[0]?.content?.parts ?? []) {
      if (part.executableCode) ran.push(part.executableCode.code ?? "");
      else if (part.codeExecutionResult) {
        outcome = part.codeExecutionResult.outcome;
        output += part.codeExecutionResult.output ?? "";
      } else if (part.inlineData?.data && /^image\/(png|jpeg)$/.test(part.inlineData.mimeType ?? "")) {
        run.onEvent({ type: "display", data: { [part.inlineData.mimeType!]: part.inlineData.data } });
        figures.push({ type: part.inlineData.mimeType!, data: part.inlineData.data });
      }
    }
    // The only files code execution gives back are its images: they go into the person's files too.
    if (figures.length) {
      const taken = new Set((await run.session.listFiles()).map((file) => file.path));
      const brought: string[] = [];
      for (const figure of figures) {
        const ext = figure.type === "image/png" ? "png" : "jpg";
        let n = 1;
        while (taken.has(`figure_${n}.${ext}`)) n++;
        const name = `figure_${n}.${ext}`;
        taken.add(name);
        await run.session.writeFile(name, Uint8Array.from(atob(figure.data), (c) => c.charCodeAt(0)));
        brought.push(name);
      }
      notes.push(`Images from the sandbox, now in your files: ${brought.join(", ")}.`);
    }
    const changed = changedCodeNote(ran, code);
    if (changed) notes.push(changed);
    const error = outcome === "OUTCOME_FAILED" || output.includes("Traceback (most recent call last)") ? errorFromStderr(output, 1) : undefined;
    const shown = error && output.includes("Traceback") ? output.slice(0, output.lastIndexOf("Traceback")) : output;
    if (shown && !(error && error.ename === "SystemExit" && !output.includes("Traceback"))) run.onEvent({ type: "stream", name: "stdout", text: shown });
    if (!ran.length || !outcome) return fail(`${SANDBOX_LABEL} did not run the code (the model answered without running it).`);
    if (outcome === "OUTCOME_DEADLINE_EXCEEDED") {
      notes.push("The code ran longer than Gemini's sandbox allows (about 30 s), so the sandbox stopped it.");
      return finish({ status: "timeout" });
    }
    if (error) return finish({ status: "error", error });
    return finish({ status: "ok" });
  });
}

const failure =
  (settings: GeminiSettings) =>
  (cause: unknown): Failure => {
    const error = describe(cause, [], settings.apiKey);
    return { aborted: error.kind === "aborted", message: error.message };
  };
