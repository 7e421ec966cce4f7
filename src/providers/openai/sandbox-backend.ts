import type { Response as ApiResponse } from "openai/resources/responses/responses";
import { safeRelativePath } from "../../../workers/file-paths";
import { ProviderError, type SandboxStore } from "../../chat/provider";
import type { BackendRun, ExecutionBackend, RunOutcome } from "../../execution/backend";
import { changedCodeNote, filesUsedBy, ownState, sandboxRun, sha256, type Failure } from "../../execution/sandbox-run";
import { errorFromStderr } from "../../execution/traceback";
import { describeFailure, openaiSdk, type ServerSettings } from "../openai-compatible/client";
import { client, WORDS } from "./client";
import { PROVIDER_ID } from "./wire";

export const SANDBOX_LABEL = "OpenAI's sandbox";

/** A scope's container on OpenAI's side. */
interface SandboxState {
  containerId?: string;
  /** sha256 → path in the current container of each of the person's files copied there. */
  files: Record<string, string>;
  /** Cells run so far. */
  cells: number;
}

const MAX_UPLOAD_BYTES = 500 * 1024 * 1024;

const SYSTEM =
  "You are the code runner of Kiln, an app that runs a person's Python. Run exactly the code you are given with the " +
  "code interpreter, once, unchanged, and nothing else. Do not explain: when it has run, answer with the single word Done.";

/**
 * What the model is asked to run: the cell file, uploaded as it is, run from the container's
 * folder with the last expression's value printed as in a notebook. The interpreter keeps its
 * variables between runs, as the browser's does.
 */
export function program(cellPath: string): string {
  const path = JSON.stringify(cellPath);
  return [
    "import ast as _kiln_ast, os as _kiln_os",
    `_kiln_os.chdir(_kiln_os.path.dirname(${path}))`,
    `_kiln_tree = _kiln_ast.parse(open(${path}).read(), ${path})`,
    "_kiln_last = _kiln_tree.body.pop() if _kiln_tree.body and isinstance(_kiln_tree.body[-1], _kiln_ast.Expr) else None",
    `exec(compile(_kiln_tree, ${path}, "exec"), globals())`,
    "if _kiln_last is not None:",
    `    _kiln_value = eval(compile(_kiln_ast.Expression(_kiln_last.value), ${path}, "eval"), globals())`,
    "    if _kiln_value is not None: print(repr(_kiln_value))",
  ].join("\n");
}

/** OpenAI's code interpreter, in a container kept with the conversation, as an execution backend. */
export function openaiSandbox(settings: ServerSettings, model: string, store: SandboxStore): ExecutionBackend {
  return { label: SANDBOX_LABEL, run: (code, run) => runInContainer(code, run, settings, model, store) };
}

async function runInContainer(code: string, run: BackendRun, settings: ServerSettings, model: string, store: SandboxStore): Promise<RunOutcome> {
  const { api } = await client(settings);
  const { toFile } = await openaiSdk.load();
  return sandboxRun(SANDBOX_LABEL, run, { failure: failure(settings) }, async ({ signal, notes, finish, fail }) => {
    const state = ownState<SandboxState>(await store.load(), PROVIDER_ID, { files: {}, cells: 0 }, notes);
    // A container lives about 20 minutes after its last use; an expired one is replaced.
    if (state.containerId) {
      const current = await api.containers.retrieve(state.containerId, { signal }).catch(() => undefined);
      if (current?.status !== "running") {
        notes.push("The sandbox from earlier runs had expired, so a new one was started: its variables and files are gone.");
        state.containerId = undefined;
      }
    }
    if (!state.containerId) {
      state.containerId = (await api.containers.create({ name: "kiln" }, { signal })).id;
      state.files = {};
    }
    const container = state.containerId;
    const sent = new Set<string>();
    for (const file of filesUsedBy(code, await run.session.listFiles(), MAX_UPLOAD_BYTES)) {
      const data = await run.session.readFile(file.path);
      const hash = await sha256(data);
      sent.add(hash);
      state.files[hash] ??= (await api.containers.files.create(container, { file: await toFile(data, file.path.split("/").pop()!) }, { signal })).path;
    }
    state.cells += 1;
    const cell = await api.containers.files.create(container, { file: await toFile(new TextEncoder().encode(code), `kiln_cell_${state.cells}.py`) }, { signal });
    await store.save({ ...state, provider: PROVIDER_ID });
    const expected = program(cell.path);
    const response = (await api.responses.create(
      {
        model,
        instructions: SYSTEM,
        input: [{ role: "user", content: `Run this Python code with the code interpreter, exactly as written, once:\n\n\`\`\`python\n${expected}\n\`\`\`` }],
        tools: [{ type: "code_interpreter", container }],
        tool_choice: "required",
        include: ["code_interpreter_call.outputs"],
        store: false,
      },
      { signal },
    )) as ApiResponse;

    let logs = "";
    const ran: string[] = [];
    let failed = false;
    const citations: { fileId: string; name: string }[] = [];
    for (const item of response.output) {
      if (item.type === "code_interpreter_call") {
        ran.push(item.code ?? "");
        failed ||= item.status === "failed" || item.status === "incomplete";
        for (const output of item.outputs ?? []) {
          if (output.type === "logs") logs += output.logs;
          else if (output.url.startsWith("data:image/png;base64,")) run.onEvent({ type: "display", data: { "image/png": output.url.slice(22) } });
        }
      } else if (item.type === "message") {
        for (const part of item.content) {
          if (part.type !== "output_text") continue;
          for (const note of part.annotations) {
            if (note.type === "container_file_citation") citations.push({ fileId: note.file_id, name: note.filename });
          }
        }
      }
    }
    const changed = changedCodeNote(ran, expected);
    if (changed) notes.push(changed);
    const error = logs.includes("Traceback (most recent call last)") ? errorFromStderr(logs, 1) : undefined;
    const shown = error ? logs.slice(0, logs.lastIndexOf("Traceback")) : logs;
    if (shown) run.onEvent({ type: "stream", name: "stdout", text: shown });

    const brought: string[] = [];
    for (const citation of citations) {
      const body = await api.containers.files.content.retrieve(citation.fileId, { container_id: container }, { signal });
      const data = new Uint8Array(await body.arrayBuffer());
      const hash = await sha256(data);
      if (sent.has(hash) || citation.name.startsWith("kiln_cell_")) continue;
      const name = safeRelativePath(citation.name.split("/").pop() ?? "");
      if (!name) continue;
      await run.session.writeFile(name, data);
      brought.push(name);
    }
    if (brought.length) notes.push(`Files from the sandbox, now in your files: ${brought.join(", ")}.`);
    if (!ran.length) return fail(`${SANDBOX_LABEL} did not run the code (the model answered without running it).`);
    if (error) return finish({ status: "error", error });
    if (failed) return fail(`${SANDBOX_LABEL} could not finish the run.`);
    return finish({ status: "ok" });
  });
}

const failure =
  (settings: ServerSettings) =>
  (cause: unknown): Failure => {
    const error = cause instanceof ProviderError ? cause : describeFailure(cause, [], settings.apiKey, WORDS);
    return { aborted: error.kind === "aborted", message: error.message };
  };
