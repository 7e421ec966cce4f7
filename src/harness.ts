/**
 * `harness.html`: the runtime API on `window.kiln`, with no interface around it, so the
 * benchmark and browser tests can drive sessions directly.
 */
import { PythonSession } from "./runtime/python-session";
import { pyodideIndexUrl, sparesReady } from "./runtime/python-worker";
import { sessionConfig } from "./runtime/session-config";
import { DEFAULT_SETTINGS } from "./storage/settings";

const harness = {
  PythonSession,
  pyodideIndexUrl,
  sparesReady,
  /** The default configuration; `input()` off, as nobody is there to answer. */
  defaultConfig: sessionConfig(DEFAULT_SETTINGS, { allowInput: false, network: true }),
};

declare global {
  interface Window {
    kiln: typeof harness;
  }
}

window.kiln = harness;
