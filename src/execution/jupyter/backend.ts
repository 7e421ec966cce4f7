import { KernelMessage, ServerConnection } from "@jupyterlab/services";
import type { MimeBundle, PythonError, WorkerEvent } from "../../../workers/python-api";
import type { JupyterConfig } from "../../storage/settings";
import type { BackendRun, ExecutionBackend, RunOutcome } from "../backend";
import { describeJupyterFailure, JUPYTER_LABEL, jupyterServer, scopeFolder, type JupyterServer } from "./server";
import { bringBack, listFolder, sendFiles } from "./files";

/** After Stop or the deadline, how long the kernel has to answer its interrupt before Kiln stops waiting. */
const INTERRUPT_GRACE_MS = 10_000;

/** Answers to a pending `input()` on the server, by scope. */
const pendingInput = new Map<string, (text: string | null) => void>();

/** Give the person's answer to the `input()` the scope's server run waits on; false when none waits. */
export function answerJupyterInput(scope: string, text: string | null): boolean {
  const answer = pendingInput.get(scope);
  if (!answer) return false;
  pendingInput.delete(scope);
  answer(text);
  return true;
}

/** A MIME bundle from the kernel as Kiln's: each value a string (JSON values as JSON text). */
function bundle(data: Record<string, unknown>): MimeBundle {
  const result: MimeBundle = {};
  for (const [mime, value] of Object.entries(data)) {
    // Images come base64-encoded, often in lines: Kiln's are one unbroken string.
    if (typeof value === "string") result[mime] = mime.startsWith("image/") && mime !== "image/svg+xml" ? value.replace(/\s/g, "") : value;
    else if (Array.isArray(value) && value.every((line) => typeof line === "string")) result[mime] = value.join("");
    else if (value !== undefined) result[mime] = JSON.stringify(value);
  }
  return result;
}

// eslint-disable-next-line no-control-regex -- the terminal colour codes of a kernel's traceback
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

function kernelError(content: { ename: string; evalue: string; traceback: string[] }): PythonError {
  return { ename: String(content.ename), evalue: String(content.evalue), traceback: content.traceback.map((line) => String(line).replace(ANSI, "")).join("\n") };
}

/** Why `input()` fails in chat, in the words of the browser's own runs there. */
export const NO_INPUT = "input() is not available here: nobody can answer. Pass the value in the code instead.";
/** The reply that makes the kernel's `input()` raise `EOFError` (ipykernel reads it as end of input). */
const END_OF_INPUT = "\u0004";

/** The kernel's bare `EOFError` from an `input()` nobody could answer, given the sentence that says why. */
function explainRefusedInput(error: PythonError): PythonError {
  if (error.ename !== "EOFError" || error.evalue) return error;
  const lines = error.traceback.split("\n");
  if (/^EOFError:?\s*$/.test(lines.at(-1) ?? "")) lines.pop();
  return { ...error, evalue: NO_INPUT, traceback: [...lines, `EOFError: ${NO_INPUT}`].join("\n") };
}

/** How a run ended when its kernel or its connection went away. */
const KERNEL_DIED =
  "The Jupyter kernel died during the run (it ran out of memory, crashed or exited, or was shut down). The next run uses a new kernel: its variables are gone.";
const connectionLost = (url: string) =>
  `The connection to ${JUPYTER_LABEL} at ${url} was lost during the run: the server stopped answering. The next run connects again (and starts a new kernel if this one is gone).`;
/** While the kernel's connection is being made again during a run: how often Kiln asks the server whether it is still there. */
const PROBE_INTERVAL_MS = 2_000;

/** The person's Jupyter server as the execution backend of one scope (`chat:<id>`, `notebook:<id>`). */
export function jupyterBackend(
  config: JupyterConfig,
  scope: string,
  options: { allowInput: boolean; outputLimitBytes: number },
): ExecutionBackend | undefined {
  const server = jupyterServer(config);
  if (!server) return undefined;
  return { label: JUPYTER_LABEL, run: (code, run) => runOnServer(server, scope, code, run, options) };
}

async function runOnServer(
  server: JupyterServer,
  scope: string,
  code: string,
  run: BackendRun,
  { allowInput, outputLimitBytes }: { allowInput: boolean; outputLimitBytes: number },
): Promise<RunOutcome> {
  const started = performance.now();
  const notes: string[] = [];
  let truncatedBytes = 0;
  const finish = (result: Omit<RunOutcome, "durationMs" | "ranOn">): RunOutcome => ({
    ...result,
    durationMs: performance.now() - started,
    ranOn: { label: JUPYTER_LABEL, reason: run.reason, notes },
    ...(truncatedBytes && { truncatedBytes }),
  });
  const fail = (message: string) => finish({ status: "error", error: { ename: "JupyterError", evalue: message, traceback: message } });
  run.onEvent({ type: "progress", message: `Running on ${JUPYTER_LABEL}…` });
  const folder = scopeFolder(scope);
  let session;
  let before;
  try {
    const got = await server.kernel(scope);
    session = got.session;
    if (got.replaced) notes.push("The Jupyter kernel of earlier runs had stopped, so a new one was started: its variables are gone.");
    await sendFiles(server, folder, run.session);
    before = await listFolder(server, folder);
  } catch (cause) {
    return fail(describeJupyterFailure(cause, server.config));
  }
  const kernel = session.kernel;
  if (!kernel) return fail(`${JUPYTER_LABEL} has no kernel for this run.`);
  if (run.signal.aborted) return finish({ status: "interrupted" });

  let value: MimeBundle | undefined;
  let error: PythonError | undefined;
  let clearWaiting = false;
  /** Stream text kept so far: past the output limit the rest is dropped with one notice, as for the browser's runs. */
  let streamed = 0;
  const stream = (name: "stdout" | "stderr", text: string) => {
    const room = outputLimitBytes - streamed;
    if (room <= 0) return void (truncatedBytes += text.length);
    const kept = text.length > room ? text.slice(0, room) : text;
    streamed += kept.length;
    emit({ type: "stream", name, text: kept });
    if (kept.length < text.length) {
      truncatedBytes += text.length - kept.length;
      emit({ type: "truncated", limitBytes: outputLimitBytes });
    }
  };
  const emit = (event: WorkerEvent) => {
    if (clearWaiting) {
      clearWaiting = false;
      run.onEvent({ type: "clear-output" });
    }
    run.onEvent(event);
  };
  const future = kernel.requestExecute({ code, allow_stdin: true, stop_on_error: true, store_history: true, silent: false });
  future.onIOPub = (message: KernelMessage.IIOPubMessage) => {
    const content = message.content as Record<string, unknown>;
    switch (message.header.msg_type) {
      case "stream":
        stream(content.name === "stderr" ? "stderr" : "stdout", String(content.text ?? ""));
        break;
      case "display_data": {
        const id = (content.transient as { display_id?: unknown } | undefined)?.display_id;
        emit({ type: "display", data: bundle((content.data ?? {}) as Record<string, unknown>), ...(typeof id === "string" && { displayId: id }) });
        break;
      }
      case "update_display_data": {
        const id = (content.transient as { display_id?: unknown } | undefined)?.display_id;
        if (typeof id === "string") run.onEvent({ type: "update-display", displayId: id, data: bundle((content.data ?? {}) as Record<string, unknown>) });
        break;
      }
      case "execute_result":
        value = bundle((content.data ?? {}) as Record<string, unknown>);
        break;
      case "error": {
        const raised = kernelError(content as { ename: string; evalue: string; traceback: string[] });
        error = inputRefused ? explainRefusedInput(raised) : raised;
        break;
      }
      case "clear_output":
        if (content.wait) clearWaiting = true;
        else run.onEvent({ type: "clear-output" });
        break;
    }
  };
  /** An `input()` in chat got end of input: the `EOFError` it raises says why. */
  let inputRefused = false;
  future.onStdin = (message) => {
    if (!KernelMessage.isInputRequestMsg(message)) return;
    const { prompt, password } = message.content;
    // No answer (the prompt was dismissed) is an empty line.
    const reply = (text: string | null) => future.sendInputReply({ status: "ok", value: text ?? "" }, message.header);
    if (!allowInput) {
      // In chat nobody answers: as in the browser, input() raises EOFError at once.
      inputRefused = true;
      future.sendInputReply({ status: "ok", value: END_OF_INPUT }, message.header);
      return;
    }
    pendingInput.set(scope, reply);
    run.onEvent({ type: "input-request", prompt: password ? `${prompt} (not hidden here)` : prompt });
  };

  let timedOut = false;
  let stopped = false;
  const interrupt = () => {
    stopped = true;
    void kernel.interrupt().catch(() => undefined);
  };
  const onAbort = () => interrupt();
  run.signal.addEventListener("abort", onAbort);
  const deadline = run.deadlineMs > 0 ? setTimeout(() => ((timedOut = true), interrupt()), run.deadlineMs) : undefined;
  // A kernel that dies (the server restarts it, or gives up), or a server that goes away, ends the run in words.
  let settled = false;
  let probing = false;
  let onStatus = (): void => undefined;
  let onConnection = (): void => undefined;
  const gone = new Promise<"died" | "removed" | "lost">((resolve) => {
    onStatus = () => {
      if (kernel.status === "dead" || kernel.status === "autorestarting") resolve("died");
    };
    // The client tries to connect again for minutes: meanwhile, ask the server whether it (and the kernel) is still there.
    onConnection = () => {
      if (probing) return;
      probing = true;
      void (async () => {
        while (!settled && kernel.connectionStatus !== "connected") {
          if (kernel.connectionStatus === "disconnected") return resolve("lost");
          const answer = await server.request(`api/kernels/${kernel.id}`).then(
            () => "there" as const,
            (cause: unknown) => (cause instanceof ServerConnection.ResponseError && cause.response.status === 404 ? ("removed" as const) : ("lost" as const)),
          );
          if (answer !== "there") return resolve(answer);
          await new Promise((wait) => setTimeout(wait, PROBE_INTERVAL_MS));
        }
      })().finally(() => (probing = false));
    };
    kernel.statusChanged.connect(onStatus);
    kernel.connectionStatusChanged.connect(onConnection);
  });
  const graceOver = new Promise<"grace">((resolve) => {
    const wait = () => setTimeout(() => resolve("grace"), INTERRUPT_GRACE_MS);
    if (run.signal.aborted) wait();
    run.signal.addEventListener("abort", wait);
    if (deadline) setTimeout(wait, run.deadlineMs);
  });
  let ended: KernelMessage.IExecuteReplyMsg | "died" | "removed" | "lost" | "grace" | { failed: unknown };
  try {
    ended = await Promise.race([future.done.catch((failed: unknown) => ({ failed })), gone, graceOver]);
  } finally {
    settled = true;
    kernel.statusChanged.disconnect(onStatus);
    kernel.connectionStatusChanged.disconnect(onConnection);
    clearTimeout(deadline);
    run.signal.removeEventListener("abort", onAbort);
    pendingInput.delete(scope);
  }
  if (ended === "grace") {
    notes.push(`Kiln stopped waiting for ${JUPYTER_LABEL}: the kernel did not stop when interrupted, and the code may still be running there.`);
    return finish({ status: timedOut ? "timeout" : "interrupted" });
  }
  if (typeof ended === "string" || "failed" in ended) {
    if (!future.isDisposed) future.dispose();
    // Stopped, then restarted (the Playground's Restart): the run was interrupted.
    if (stopped && !timedOut) return finish({ status: "interrupted" });
    if (ended === "lost" || ended === "removed" || ended === "died") {
      // The connection is let go: the next run starts a new kernel after a death, else finds the scope's kernel again or starts one.
      server.forget(scope, ended === "died");
      return fail(ended === "lost" ? connectionLost(server.config.url) : KERNEL_DIED);
    }
    return fail(describeJupyterFailure(ended.failed, server.config));
  }
  try {
    const brought = await bringBack(server, folder, before, run.session);
    if (brought.length) notes.push(`Files from the Jupyter server, now in your files: ${brought.join(", ")}.`);
  } catch (cause) {
    notes.push(`Files the run wrote on the server could not be brought back: ${describeJupyterFailure(cause, server.config)}`);
  }
  if (stopped) return finish({ status: timedOut ? "timeout" : "interrupted", ...(error && error.ename !== "KeyboardInterrupt" && { error }) });
  // A server that shuts down interrupts its kernels first.
  if (error?.ename === "KeyboardInterrupt") notes.push(`The run was interrupted on ${JUPYTER_LABEL}, not by Kiln: the server may be shutting down, or its kernel was interrupted there.`);
  if (error) return finish({ status: "error", error, ...(value && { value }) });
  if (ended.content.status === "error") return fail(`${JUPYTER_LABEL} could not run the code.`);
  return finish({ status: "ok", ...(value && { value }) });
}
