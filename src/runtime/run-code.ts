import type { FileInfo, RunResult, SandboxInfo, WorkerEvent } from "../../workers/python-api";
import { downloadFile, ProviderError, uploadFile, type ProviderSettings } from "../providers/anthropic/client";
import { errorFromStderr, runInSandbox, sandboxProgram, type SandboxFile } from "../providers/anthropic/sandbox";
import { safeRelativePath } from "../../workers/file-paths";
import type { PythonSession } from "./python-session";
import { route, routeAfterBrowserError, type Backend, type Route } from "./route";

/** A scope's sandbox on Anthropic's side, kept in IndexedDB. */
export interface SandboxState {
  containerId?: string;
  expiresAt?: string;
  /** sha256 → Files API id of each of the person's files uploaded so far. */
  uploads: Record<string, string>;
  /** sha256 of the files already in the current container. */
  attached: string[];
  /** Cells run on the sandbox so far. */
  cells: number;
}

export interface SandboxAccess {
  settings: ProviderSettings;
  /** Code execution tool version, such as `code_execution_20260521`. */
  toolType: string;
  load: () => Promise<SandboxState>;
  save: (state: SandboxState) => Promise<void>;
}

export interface RunCodeOptions {
  session: PythonSession;
  backend: Backend;
  /** How to reach Anthropic's sandbox; absent without an API key. */
  sandbox?: SandboxAccess;
  /** Never send code to the sandbox unasked: report `unavailable` with how to (the Playground). */
  askFirst?: boolean;
  /** Run on the sandbox whatever the imports (the person asked for it). */
  forceSandbox?: boolean;
  /** The run deadline in ms; 0 for none. Browser runs keep their session's own. */
  deadlineMs: number;
  signal?: AbortSignal;
  onEvent?: (event: WorkerEvent) => void;
}

/** A person's file larger than this is not sent to the sandbox. */
const MAX_UPLOAD_BYTES = 500 * 1024 * 1024;

/** Run code where it can run: the browser, or Anthropic's sandbox (see route.ts). */
export async function runCode(code: string, options: RunCodeOptions): Promise<RunResult> {
  const { session, sandbox } = options;
  if (options.forceSandbox) {
    if (!sandbox) return unavailableResult({ where: "unavailable", reason: "No API key is set.", modules: [] });
    return runOnSandbox(code, "you asked to run it there", sandbox, options);
  }
  let decision: Route = { where: "browser" };
  if (options.backend !== "browser") {
    const info = await session.ready;
    decision = route({
      imports: await session.imports(code),
      lockImports: new Set(info.lockImports),
      backend: options.backend,
      hasKey: Boolean(sandbox),
      askFirst: options.askFirst,
    });
  }
  if (decision.where === "unavailable") return unavailableResult(decision);
  if (decision.where === "provider") return runOnSandbox(code, decision.reason, sandbox!, options);

  const result = await session.run(code, { onEvent: options.onEvent });
  if (result.status !== "error" || options.backend !== "auto") return result;
  const info = await session.ready;
  const retry = routeAfterBrowserError(result.error, {
    lockImports: new Set(info.lockImports),
    backend: options.backend,
    hasKey: Boolean(sandbox),
    askFirst: options.askFirst,
  });
  if (retry.where !== "provider") return result;
  options.onEvent?.({ type: "stream", name: "stderr", text: `[${retry.reason}: running the code again on Anthropic's sandbox]\n` });
  return runOnSandbox(code, retry.reason, sandbox!, options);
}

function unavailableResult(decision: Extract<Route, { where: "unavailable" }>): RunResult {
  const name = decision.modules[0];
  return {
    status: "unavailable",
    missingModules: decision.modules,
    error: {
      ename: "ModuleNotFoundError",
      evalue: decision.reason,
      traceback: name ? `ModuleNotFoundError: No module named '${name}' (${decision.reason})` : decision.reason,
    },
    durationMs: 0,
  };
}

/** The person's files that the code names (by path or by file name). */
function filesUsedBy(code: string, files: readonly FileInfo[]): FileInfo[] {
  return files.filter((file) => {
    if (file.size > MAX_UPLOAD_BYTES) return false;
    const base = file.path.split("/").pop()!;
    return code.includes(file.path) || code.includes(base);
  });
}

async function sha256(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function runOnSandbox(code: string, reason: string, access: SandboxAccess, options: RunCodeOptions): Promise<RunResult> {
  const started = performance.now();
  const emit = (name: "stdout" | "stderr", text: string) => text && options.onEvent?.({ type: "stream", name, text });
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onAbort);
  let timedOut = false;
  const timer =
    options.deadlineMs > 0
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, options.deadlineMs)
      : undefined;
  const finish = (result: Omit<RunResult, "durationMs" | "sandbox">, notes: string[] = []): RunResult => ({
    ...result,
    durationMs: performance.now() - started,
    sandbox: { reason, notes } satisfies SandboxInfo,
  });
  try {
    const state = await access.load();
    options.onEvent?.({ type: "progress", message: "Running on Anthropic's sandbox…" });
    const files: SandboxFile[] = [];
    for (const file of filesUsedBy(code, await options.session.listFiles())) {
      const data = await options.session.readFile(file.path);
      const hash = await sha256(data);
      state.uploads[hash] ??= await uploadFile(access.settings, file.path.split("/").pop()!, data, controller.signal);
      files.push({ path: file.path, sha256: hash, fileId: state.uploads[hash] });
    }
    state.cells += 1;
    const program = sandboxProgram(code, state.cells, files, access.toolType);
    const reply = await runInSandbox({
      settings: access.settings,
      toolType: access.toolType,
      program,
      files,
      attached: new Set(state.attached),
      container: state.containerId,
      signal: controller.signal,
    });
    const notes: string[] = [];
    if (reply.containerReset) {
      notes.push("The sandbox from earlier runs had expired, so a new one was started: its variables and files are gone.");
      state.attached = [];
    }
    if (reply.container) {
      state.containerId = reply.container.id;
      state.expiresAt = reply.container.expiresAt;
    }
    state.attached = [...new Set([...state.attached, ...files.map((file) => file.sha256)])];
    await access.save(state);
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
      const file = await downloadFile(access.settings, fileId, controller.signal);
      // The person's own files, copied into place on the sandbox, are not news.
      if (sent.has(await sha256(file.data))) continue;
      const name = safeRelativePath(file.name.split("/").pop() ?? "");
      if (!name) continue;
      await options.session.writeFile(name, file.data);
      brought.push(name);
    }
    if (brought.length) notes.push(`Files from the sandbox, now in your files: ${brought.join(", ")}.`);

    if (reply.toolError) {
      return finish({ status: reply.toolError.status, error: { ename: "SandboxError", evalue: reply.toolError.message, traceback: reply.toolError.message } }, notes);
    }
    if (!reply.ran || reply.returnCode === undefined) {
      const message = "Anthropic's sandbox did not run the code (the model answered without running it).";
      return finish({ status: "error", error: { ename: "SandboxError", evalue: message, traceback: message } }, notes);
    }
    if (reply.returnCode === 0) return finish({ status: "ok" }, notes);
    return finish(
      { status: "error", ...(error?.ename === "SystemExit" ? { exitCode: reply.returnCode } : {}), ...(error ? { error } : {}) },
      notes,
    );
  } catch (cause) {
    if (cause instanceof ProviderError && cause.kind === "aborted") {
      return finish({ status: timedOut ? "timeout" : "interrupted" }, [
        "Kiln stopped waiting for Anthropic's sandbox; the code may still finish there.",
      ]);
    }
    const message = cause instanceof Error ? cause.message : String(cause);
    return finish({ status: "error", error: { ename: "SandboxError", evalue: message, traceback: message } });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}
