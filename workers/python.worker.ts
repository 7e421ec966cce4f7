import * as Comlink from "comlink";
import { PythonRuntime } from "./python-runtime";

Comlink.expose(new PythonRuntime());
