import * as Comlink from "comlink";
import type { WorkerStart } from "./python-api";
import { PythonRuntime } from "./python-runtime";

// The frame that starts the worker sends its ports (and shared buffers) as the first message.
self.addEventListener(
  "message",
  (event: MessageEvent<Partial<WorkerStart>>) => {
    const start = event.data;
    if (start?.kilnPort && start.events && start.fetch) {
      Comlink.expose(new PythonRuntime(start as WorkerStart), start.kilnPort);
    }
  },
  { once: true },
);
