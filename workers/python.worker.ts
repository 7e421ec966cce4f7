import * as Comlink from "comlink";
import { PythonRuntime } from "./python-runtime";

// The page sends the port to talk Comlink over as the first message.
self.addEventListener(
  "message",
  (event: MessageEvent<{ kilnPort?: MessagePort }>) => {
    if (event.data?.kilnPort) Comlink.expose(new PythonRuntime(), event.data.kilnPort);
  },
  { once: true },
);
