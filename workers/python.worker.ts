import * as Comlink from "comlink";
import type { FilesFromFrame, StartFiles, WasmFromFrame, WorkerStart } from "./python-api";
import { PythonRuntime } from "./python-runtime";
import { warmUpFactory, withoutStackSwitchingInFirefox } from "./python-boot";

// The frame that starts the worker sends its ports (and shared buffers) in one message, then
// Pyodide's compiled WebAssembly (or null). The files a start reads come once, before the ports
// (to a worker loaded ahead) or after them.
let wasmFromFrame: (module: WebAssembly.Module | undefined) => void = () => undefined;
const compiledByFrame = new Promise<WebAssembly.Module | undefined>((resolve) => (wasmFromFrame = resolve));
// Handed to the runtime and let go of here: the files are large, and needed once.
let filesFromFrame: ((files: StartFiles | null) => void) | undefined;
let filesByFrame: Promise<StartFiles | null> | undefined = new Promise((resolve) => (filesFromFrame = resolve));
self.addEventListener("message", (event: MessageEvent<Partial<WorkerStart & FilesFromFrame & WasmFromFrame> | null>) => {
  const message = event.data;
  if (typeof message !== "object" || !message) return;
  if ("kilnFrameFiles" in message) {
    filesFromFrame?.(checkedFiles(message.kilnFrameFiles));
    filesFromFrame = undefined;
  } else if ("kilnWasm" in message) {
    wasmFromFrame(message.kilnWasm instanceof WebAssembly.Module ? message.kilnWasm : undefined);
  } else if (filesByFrame && message.kilnPort && message.events && message.fetch) {
    Comlink.expose(new PythonRuntime(message as WorkerStart, compiledByFrame, filesByFrame), message.kilnPort);
    filesByFrame = undefined;
  }
});

/** The frame's files as the contract has them, or null. */
function checkedFiles(files: unknown): StartFiles | null {
  if (!files) return null;
  const { stdlib, snapshot } = files as Partial<StartFiles>;
  return {
    stdlib: stdlib && typeof stdlib.url === "string" && stdlib.data instanceof ArrayBuffer ? stdlib : null,
    snapshot: snapshot && typeof snapshot.checksum === "string" && snapshot.data instanceof ArrayBuffer ? snapshot : null,
  };
}

// A Stop that lands between two steps of a run's task is re-raised by asyncio out of the event
// loop as well as reported in the run's result: that copy is not an error of the worker's.
const isStop = (text: unknown) => /\bKeyboardInterrupt\b/.test(String(text));
self.addEventListener("error", (event) => {
  if (isStop(event.message) || isStop(event.error)) event.preventDefault();
});
self.addEventListener("unhandledrejection", (event) => {
  if (isStop(event.reason)) event.preventDefault();
});

withoutStackSwitchingInFirefox();
// While the worker waits for its ports (a worker its frame loaded ahead of time waits longest).
warmUpFactory();
