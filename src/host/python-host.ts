/**
 * The code of a Python host frame: the frame that starts one Python worker. The page makes
 * the frame (`<iframe sandbox="allow-scripts" srcdoc>`, see host-bootstrap.ts), so the frame
 * and its worker have an opaque origin and the app's Content-Security-Policy; without
 * network, a policy added here before the worker starts lets the worker connect nowhere
 * (policies only add up, and a `data:` worker takes its creator's). No Python runs in this
 * frame; it compiles Pyodide's WebAssembly for its worker (from the bytes the page sends, never
 * from the worker), and relays Stop and `input()` answers into the worker's shared memory.
 */
import type { HostCommand, HostReport, HostStart, WasmFromFrame, WorkerStart } from "../../workers/python-api";
import { isHostStart } from "../runtime/worker-guards";
import { answerStdin, clearInterrupt, createInterruptBuffer, createStdinBuffer, requestInterrupt, keepStopPending } from "../../workers/shared-buffers";
import { capabilities } from "../runtime/capabilities";
import { WORKER_BOOTSTRAP_URL } from "./host-bootstrap";
import { compileWasm } from "../../workers/wasm-early";

// The bootstrap keeps the page's start message (it checked that the page sent it).
const message: unknown = (globalThis as { kilnHostStart?: unknown }).kilnHostStart;
if (isHostStart(message)) start(message);

function start(message: HostStart): void {
  const { control } = message;
  const report = (value: HostReport) => control.postMessage(value);
  if (!message.network) forbidConnections();
  // This frame's own: without shared memory, Stop replaces the worker and input() says why it cannot ask.
  const shared = capabilities.sharedMemory;
  const interruptBuffer = shared ? createInterruptBuffer() : undefined;
  const stdinBuffer = shared ? createStdinBuffer() : undefined;
  const start: WorkerStart = {
    kilnPort: message.kilnPort,
    events: message.events,
    fetch: message.fetch,
    ...(interruptBuffer ? { interruptBuffer } : {}),
    ...(stdinBuffer ? { stdinBuffer } : {}),
  };
  // Compiled here while the worker starts and evaluates its megabyte of code, instead of after.
  let compiledFrom: (body: Blob | null) => void = () => undefined;
  const compiled = new Promise<Blob | null>((resolve) => (compiledFrom = resolve)).then((body) => (body ? compileWasm(body) : undefined));
  let worker: Worker | undefined;
  const launch = (url: string, then: (started: Worker) => void) => {
    try {
      worker = new Worker(url, { type: "module", name: "kiln-python" });
    } catch (error) {
      report({ type: "worker-error", message: `The Python worker could not start: ${String(error)}` });
      return;
    }
    worker.addEventListener("error", (event) => {
      event.preventDefault();
      report({ type: "worker-error", message: event.message || "The Python worker stopped unexpectedly." });
    });
    then(worker);
  };
  const begin = (loaded: Worker) => {
    loaded.postMessage(start, [message.kilnPort, message.events, message.fetch]);
    void compiled.then((module) => {
      try {
        loaded.postMessage({ kilnWasm: module ?? null } satisfies WasmFromFrame);
      } catch {
        // An engine that cannot send a compiled module to a worker: the worker compiles it.
        loaded.postMessage({ kilnWasm: null } satisfies WasmFromFrame);
      }
    });
  };
  // The worker's code from a `blob:` URL where the engine allows it, else as a `data:` URL.
  launch(WORKER_BOOTSTRAP_URL, (bootstrap) => {
    bootstrap.addEventListener("message", function loaded(event: MessageEvent<{ kilnBootstrap?: string } | null>) {
      bootstrap.removeEventListener("message", loaded);
      if (event.data?.kilnBootstrap === "loaded") return begin(bootstrap);
      bootstrap.terminate();
      launch(`data:text/javascript,${encodeURIComponent(message.source)}`, begin);
    });
    bootstrap.postMessage(message.source);
  });
  control.onmessage = (event: MessageEvent<HostCommand>) => {
    const command = event.data;
    switch (command?.type) {
      case "interrupt":
        if (interruptBuffer) requestInterrupt(interruptBuffer);
        if (stdinBuffer) answerStdin(stdinBuffer, null);
        return;
      case "clear-interrupt":
        if (interruptBuffer) clearInterrupt(interruptBuffer);
        report({ type: "answer", id: command.id, value: true });
        return;
      case "interrupt-pending":
        // Without an interrupt buffer, SIGINT is never seen. STOP_SEEN is a Stop that Python has seen.
        report({ type: "answer", id: command.id, value: !interruptBuffer || keepStopPending(interruptBuffer) });
        return;
      case "terminate":
        worker?.terminate();
        return;
      case "wasm":
        compiledFrom(command.body instanceof Blob ? command.body : null);
        return;
      case "answer-input":
        if (stdinBuffer) answerStdin(stdinBuffer, typeof command.text === "string" ? command.text : null);
        return;
    }
  };
  report({ type: "started", sharedMemory: shared });
}

/**
 * Python without network: a policy that lets nothing here connect anywhere. Policies only
 * add up, so nothing (and nobody in the worker) can lift it later; the worker, started after
 * it, inherits it. Pyodide's own files still arrive through the page.
 */
function forbidConnections(): void {
  const meta = document.createElement("meta");
  meta.httpEquiv = "Content-Security-Policy";
  meta.content = "connect-src 'none'";
  document.head.append(meta);
}
