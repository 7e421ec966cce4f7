import { safeRelativePath } from "../../../workers/file-paths";
import { ProviderError, type SandboxStore } from "../../chat/provider";
import type { BackendRun, ExecutionBackend, RunOutcome } from "../../execution/backend";
import { filesUsedBy, ownState, sandboxRun, sha256, type Failure } from "../../execution/sandbox-run";
import { errorFromStderr } from "../../execution/traceback";
import { downloadFile, uploadFile, type ProviderSettings } from "./client";
import { runInSandbox, sandboxProgram, type SandboxFile } from "./sandbox";
import { PROVIDER_ID } from "./wire";

export const SANDBOX_LABEL = "Anthropic's sandbox";

/** A scope's sandbox on Anthropic's side. */
interface SandboxState {
  containerId?: string;
  expiresAt?: string;
  /** sha256 → Files API id of each of the person's files uploaded so far. */
  uploads: Record<string, string>;
  /** sha256 of the files already in the current container. */
  attached: string[];
  /** Cells run on the sandbox so far. */
  cells: number;
}

/** A person's file larger than this is not sent to the sandbox. */
const MAX_UPLOAD_BYTES = 500 * 1024 * 1024;

/** Anthropic's code execution sandbox as an execution backend. */
export function anthropicSandbox(settings: ProviderSettings, toolType: string, store: SandboxStore): ExecutionBackend {
  return { label: SANDBOX_LABEL, run: (code, run) => runOnSandbox(code, run, settings, toolType, store) };
}

async function runOnSandbox(
  code: string,
  run: BackendRun,
  settings: ProviderSettings,
  toolType: string,
  store: SandboxStore,
): Promise<RunOutcome> {
  const emit = (name: "stdout" | "stderr", text: string) => text && run.onEvent({ type: "stream", name, text });
  return sandboxRun(SANDBOX_LABEL, run, { failure }, async ({ signal, notes, finish, fail }) => {
    const state = ownState<SandboxState>(await store.load(), PROVIDER_ID, { uploads: {}, attached: [], cells: 0 }, notes);
    const files: SandboxFile[] = [];
    for (const file of filesUsedBy(code, await run.session.listFiles(), MAX_UPLOAD_BYTES)) {
      const data = await run.session.readFile(file.path);
      const hash = await sha256(data);
      state.uploads[hash] ??= await uploadFile(settings, file.path.split("/").pop()!, data, signal);
      files.push({ path: file.path, sha256: hash, fileId: state.uploads[hash] });
    }
    state.cells += 1;
    const program = sandboxProgram(code, state.cells, files, toolType);
    const reply = await runInSandbox({
      settings,
      toolType,
      program,
      files,
      attached: new Set(state.attached),
      container: state.containerId,
      signal,
    });
    if (reply.containerReset) {
      notes.push("The sandbox from earlier runs had expired, so a new one was started: its variables and files are gone.");
      state.attached = [];
    }
    if (reply.container) {
      state.containerId = reply.container.id;
      state.expiresAt = reply.container.expiresAt;
    }
    state.attached = [...new Set([...state.attached, ...files.map((file) => file.sha256)])];
    await store.save({ ...state, provider: PROVIDER_ID });
    if (reply.changed) notes.push(`Claude did not run the code exactly as given. What ran:\n${reply.changed}`);

    let stderr = reply.stderr;
    let error;
    if (!reply.toolError && reply.returnCode !== undefined && reply.returnCode !== 0) {
      error = errorFromStderr(stderr, reply.returnCode);
      // The traceback is shown as the run's error, not twice.
      if (error.ename !== "SystemExit") stderr = stderr.slice(0, stderr.lastIndexOf("Traceback"));
    }
    emit("stdout", reply.stdout);
    emit("stderr", stderr);

    const brought: string[] = [];
    const sent = new Set(files.map((file) => file.sha256));
    for (const fileId of reply.fileIds) {
      const file = await downloadFile(settings, fileId, signal);
      // The person's own files, copied into place on the sandbox, are not news.
      if (sent.has(await sha256(file.data))) continue;
      const name = safeRelativePath(file.name.split("/").pop() ?? "");
      if (!name) continue;
      await run.session.writeFile(name, file.data);
      brought.push(name);
    }
    if (brought.length) notes.push(`Files from the sandbox, now in your files: ${brought.join(", ")}.`);

    if (reply.toolError) {
      return finish({ status: reply.toolError.status, error: { ename: "SandboxError", evalue: reply.toolError.message, traceback: reply.toolError.message } });
    }
    if (!reply.ran || reply.returnCode === undefined) return fail(`${SANDBOX_LABEL} did not run the code (the model answered without running it).`);
    if (reply.returnCode === 0) return finish({ status: "ok" });
    return finish({ status: "error", ...(error?.ename === "SystemExit" ? { exitCode: reply.returnCode } : {}), ...(error ? { error } : {}) });
  });
}

const failure = (cause: unknown): Failure => ({
  aborted: cause instanceof ProviderError && cause.kind === "aborted",
  message: cause instanceof Error ? cause.message : String(cause),
});
