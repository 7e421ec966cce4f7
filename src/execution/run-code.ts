import type { WorkerEvent } from "../../workers/python-api";
import { stoppedBeforeStart, type PythonSession } from "../runtime/python-session";
import { browserBackend, type ExecutionBackend, type RunOutcome } from "./backend";
import { NO_JUPYTER, route, routeAfterBrowserError, type Backend, type Route } from "./route";

/** A provider's sandbox, as the router offers it. */
export interface SandboxChoice {
  backend: ExecutionBackend;
  /** The provider's name, for "Run on <provider>". */
  provider: string;
}

export interface RunCodeOptions {
  session: PythonSession;
  /** The Backend setting. */
  backend: Backend;
  /** The sandbox of the provider in use; absent when it has none or no key is set. */
  sandbox?: SandboxChoice;
  /** Without a sandbox: what would give one, as a sentence. */
  noSandbox: string;
  /** Never send code to the sandbox unasked: report `unavailable` with how to (the Playground). */
  askFirst?: boolean;
  /** Run on the sandbox whatever the imports (the person asked for it). */
  forceSandbox?: boolean;
  /** The person's Jupyter server, when one is set. */
  jupyter?: ExecutionBackend;
  /** Run on the Jupyter server whatever the imports (the person asked for it, or chose it as the notebook's kernel). */
  forceJupyter?: boolean;
  /** The run deadline in ms; 0 for none. Browser runs keep their session's own. */
  deadlineMs: number;
  /** Stop: whichever backend runs the code is stopped. */
  signal: AbortSignal;
  onEvent: (event: WorkerEvent) => void;
}

/** Run code where it can run: the browser, or the provider's sandbox (see route.ts). */
export async function runCode(code: string, options: RunCodeOptions): Promise<RunOutcome> {
  const { session, sandbox } = options;
  const started = performance.now();
  // Stop pressed while Python was still starting, or the imports were read: the run never starts.
  const stoppedEarly = (): RunOutcome | undefined => (options.signal.aborted ? stoppedBeforeStart(started) : undefined);
  const elsewhere = (reason: string) => sandbox!.backend.run(code, { ...options, reason });
  const onJupyter = (reason: string) => options.jupyter!.run(code, { ...options, reason });
  if (options.forceJupyter) {
    if (!options.jupyter) return unavailableResult({ where: "unavailable", reason: NO_JUPYTER, modules: [] });
    return onJupyter("you asked to run it there");
  }
  if (options.forceSandbox) {
    if (!sandbox) return unavailableResult({ where: "unavailable", reason: options.noSandbox, modules: [] });
    return elsewhere("you asked to run it there");
  }
  const where = {
    backend: options.backend,
    sandbox: sandbox && { label: sandbox.backend.label, provider: sandbox.provider },
    noSandbox: options.noSandbox,
    askFirst: options.askFirst,
    jupyter: options.jupyter && { label: options.jupyter.label },
  };
  let decision: Route = { where: "browser" };
  if (options.backend !== "browser") {
    const info = await session.ready;
    // A worker that did not answer was replaced meanwhile: the run is routed as code that imports nothing.
    const imports = await session.imports(code, options.signal).catch(() => ({ imports: [], available: [] }));
    decision = route({ ...where, imports, lockImports: new Set(info.lockImports) });
  }
  const early = stoppedEarly();
  if (early) return early;
  if (decision.where === "unavailable") return unavailableResult(decision);
  if (decision.where === "provider") return elsewhere(decision.reason);
  if (decision.where === "jupyter") return onJupyter(decision.reason);

  const result = await browserBackend.run(code, { ...options, reason: "" });
  if (result.status !== "error" || options.backend !== "auto") return result;
  const info = await session.ready;
  const retry = routeAfterBrowserError(result.error, { ...where, lockImports: new Set(info.lockImports) });
  if (retry.where !== "provider" && retry.where !== "jupyter") return result;
  const there = retry.where === "jupyter" ? options.jupyter! : sandbox!.backend;
  options.onEvent({ type: "stream", name: "stderr", text: `[${retry.reason}: running the code again on ${there.label}]\n` });
  return retry.where === "jupyter" ? onJupyter(retry.reason) : elsewhere(retry.reason);
}

function unavailableResult(decision: Extract<Route, { where: "unavailable" }>): RunOutcome {
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
