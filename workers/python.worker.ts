import * as Comlink from "comlink";
import type { WasmFromFrame, WorkerStart } from "./python-api";
import { PythonRuntime } from "./python-runtime";
import { warmUpFactory } from "./python-boot";

// The frame that starts the worker sends its ports (and shared buffers) as the first message,
// then Pyodide's compiled WebAssembly (or null) as the second.
let wasmFromFrame: (module: WebAssembly.Module | undefined) => void = () => undefined;
const compiledByFrame = new Promise<WebAssembly.Module | undefined>((resolve) => (wasmFromFrame = resolve));
self.addEventListener(
  "message",
  (event: MessageEvent<Partial<WorkerStart>>) => {
    const start = event.data;
    if (start?.kilnPort && start.events && start.fetch) {
      Comlink.expose(new PythonRuntime(start as WorkerStart, compiledByFrame), start.kilnPort);
    }
    self.addEventListener("message", (event: MessageEvent<Partial<WasmFromFrame> | null>) => {
      const module = event.data?.kilnWasm;
      wasmFromFrame(module instanceof WebAssembly.Module ? module : undefined);
    });
  },
  { once: true },
);

// A Stop that lands between two steps of a run's task is re-raised by asyncio out of the event
// loop as well as reported in the run's result: that copy is not an error of the worker's.
const isStop = (text: unknown) => /\bKeyboardInterrupt\b/.test(String(text));
self.addEventListener("error", (event) => {
  if (isStop(event.message) || isStop(event.error)) event.preventDefault();
});
self.addEventListener("unhandledrejection", (event) => {
  if (isStop(event.reason)) event.preventDefault();
});

// While the worker waits for its ports (a worker its frame loaded ahead of time waits longest).
warmUpFactory();
