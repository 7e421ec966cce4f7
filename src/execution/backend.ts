import type { WorkerEvent } from "../../workers/python-api";
import type { RunOutcome } from "../model/output";
import type { PythonSession } from "../runtime/python-session";

export type { RunOutcome };

export interface BackendRun {
  /** The browser session: its files go along, files made elsewhere come back into it. */
  session: PythonSession;
  /** Why the run goes to this backend, for the badge. */
  reason: string;
  /** The run deadline in ms; 0 for none. */
  deadlineMs: number;
  /** Stop: the run ends `interrupted` (or `timeout` past the deadline). */
  signal: AbortSignal;
  onEvent: (event: WorkerEvent) => void;
}

/** Somewhere Python runs: the browser, or a provider's code sandbox. */
export interface ExecutionBackend {
  /** Its name for the person, as in "Ran on Anthropic's sandbox". */
  readonly label: string;
  /** Whether variables are lost between runs there. */
  readonly stateless?: boolean;
  run(code: string, run: BackendRun): Promise<RunOutcome>;
}

/** Run in the browser session; Stop (`signal`) interrupts it. `timeoutMs` replaces the session's deadline. */
export function runInBrowser(
  session: PythonSession,
  code: string,
  { signal, onEvent, timeoutMs }: { signal: AbortSignal; onEvent: (event: WorkerEvent) => void; timeoutMs?: number },
): Promise<RunOutcome> {
  return session.run(code, { onEvent, signal, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
}

/** The browser session, with its own deadline. */
export const browserBackend: ExecutionBackend = {
  label: "the browser",
  run: (code, { session, signal, onEvent }) => runInBrowser(session, code, { signal, onEvent }),
};
