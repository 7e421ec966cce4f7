import type { FileInfo } from "../../workers/python-api";
import type { BackendRun, RunOutcome } from "./backend";

/** One run on a provider's sandbox, as its backend sees it. */
export interface SandboxCall {
  /** Aborted by Stop or by the run deadline. */
  signal: AbortSignal;
  /** What the person should know, shown under the run and told to the model. */
  notes: string[];
  /** The run's outcome, timed and marked as run on this sandbox. */
  finish(result: Omit<RunOutcome, "durationMs" | "ranOn">): RunOutcome;
  /** A run that ended with `message` as a `SandboxError`. */
  fail(message: string): RunOutcome;
}

/** How a sandbox's client failed: a Stop, or a message for the person. */
export type Failure = { aborted: boolean; message: string };

/**
 * The frame every sandbox run shares: Stop and the deadline abort `call.signal`; an aborted
 * run ends `interrupted` or `timeout`, any other failure `error` with the client's words.
 */
export async function sandboxRun(
  label: string,
  run: BackendRun,
  options: { stateless?: boolean; failure: (cause: unknown) => Failure },
  body: (call: SandboxCall) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const started = performance.now();
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  run.signal.addEventListener("abort", onAbort);
  let timedOut = false;
  const timer = run.deadlineMs > 0 ? setTimeout(() => ((timedOut = true), controller.abort()), run.deadlineMs) : undefined;
  const notes: string[] = [];
  const finish: SandboxCall["finish"] = (result) => ({
    ...result,
    durationMs: performance.now() - started,
    ranOn: { label, reason: run.reason, notes, ...(options.stateless ? { stateless: true } : {}) },
  });
  const fail = (message: string) => finish({ status: "error", error: { ename: "SandboxError", evalue: message, traceback: message } });
  try {
    run.onEvent({ type: "progress", message: `Running on ${label}…` });
    return await body({ signal: controller.signal, notes, finish, fail });
  } catch (cause) {
    const failure = options.failure(cause);
    if (!failure.aborted) return fail(failure.message);
    notes.push(`Kiln stopped waiting for ${label}; the code may still finish there.`);
    return finish({ status: timedOut ? "timeout" : "interrupted" });
  } finally {
    clearTimeout(timer);
    run.signal.removeEventListener("abort", onAbort);
  }
}

/** The person's files that the code names (by path or by file name), up to `maxBytes` each. */
export function filesUsedBy(code: string, files: readonly FileInfo[], maxBytes: number): FileInfo[] {
  return files.filter((file) => file.size <= maxBytes && (code.includes(file.path) || code.includes(file.path.split("/").pop()!)));
}

export async function sha256(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * A scope's stored sandbox record as `provider`'s state, over `fresh`. A record of another
 * provider (the conversation switched) gives a fresh state, and a note that says so.
 */
export function ownState<T extends object>(record: Record<string, unknown> | undefined, provider: string, fresh: T, notes: string[]): T {
  if (record?.provider === provider) return { ...fresh, ...record };
  if (record) {
    notes.push("This conversation's earlier sandbox runs were on another provider: this is a new sandbox, without their variables and files.");
  }
  return fresh;
}

/** A note showing what ran, when the model did not run exactly `expected` once (nothing when it did, or ran nothing). */
export function changedCodeNote(ran: readonly string[], expected: string): string | undefined {
  const clean = (text: string) => text.replace(/\s+$/, "");
  if (!ran.length || (ran.length === 1 && clean(ran[0]) === clean(expected))) return undefined;
  return `The model did not run the code exactly as given. What ran:\n${ran.join("\n\n")}`;
}
