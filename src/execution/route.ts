import type { ImportReport, PythonError } from "../../workers/python-api";

import type { BackendSetting } from "../storage/settings";

export type Backend = BackendSetting;

export interface RouteInput {
  /** What the code imports, and which of those the browser interpreter already has. */
  imports: ImportReport;
  /** Import names that Pyodide's lock file provides. */
  lockImports: ReadonlySet<string>;
  backend: Backend;
  /** The sandbox code may go to: its name, and its provider's (for "Run on <provider>"). */
  sandbox?: { label: string; provider: string };
  /** Without a sandbox: what would give one, as a sentence. */
  noSandbox: string;
  /** The person's Jupyter server, when one is set: its name for the person. */
  jupyter?: { label: string };
  /** Never send code to the sandbox unasked (the Playground): say how to do it instead. */
  askFirst?: boolean;
}

export type Route =
  | { where: "browser" }
  | { where: "jupyter"; reason: string; modules: string[] }
  | { where: "provider"; reason: string; modules: string[] }
  | { where: "unavailable"; reason: string; modules: string[] };

/** Shown when the Backend setting names a Jupyter server and none is set. */
export const NO_JUPYTER = "No Jupyter server is set: add its Server URL and Token in Settings (Jupyter server).";

/**
 * Where a run the browser cannot do goes: the person's Jupyter server when one is set, else the
 * provider's sandbox, else `unavailable` with what would make it work.
 */
function provider(input: Omit<RouteInput, "imports">, reason: string, modules: string[], why: string): Route {
  if (input.jupyter) {
    if (input.askFirst) return { where: "unavailable", reason: `${why}. Press Run on Jupyter server to run it on ${input.jupyter.label}.`, modules };
    return { where: "jupyter", reason, modules };
  }
  if (!input.sandbox) return { where: "unavailable", reason: `${why}. ${input.noSandbox}`, modules };
  if (input.askFirst) {
    const ask = `Press Run on ${input.sandbox.provider} to run it on ${input.sandbox.label}.`;
    return { where: "unavailable", reason: `${why}. ${ask}`, modules };
  }
  return { where: "provider", reason, modules };
}

/** Modules the browser can provide neither from the interpreter nor from the lock file. */
export function missingModules({ imports, lockImports }: Pick<RouteInput, "imports" | "lockImports">): string[] {
  const available = new Set(imports.available);
  return imports.imports.filter((name) => !available.has(name) && !lockImports.has(name));
}

const list = (names: string[]) => names.join(", ");
const notInBrowser = (names: string[]) => `${list(names)} ${names.length > 1 ? "are" : "is"} not available in the browser`;

/** Where a run goes, decided from its imports, the lock file and the settings alone. */
export function route(input: RouteInput): Route {
  const missing = missingModules(input);
  if (input.backend === "browser") return { where: "browser" };
  if (input.backend === "provider") {
    return provider({ ...input, jupyter: undefined }, "the Backend setting is provider", missing, "The Backend setting is provider");
  }
  if (input.backend === "jupyter") {
    if (!input.jupyter) return { where: "unavailable", reason: `The Backend setting is Jupyter server only. ${NO_JUPYTER}`, modules: missing };
    return { where: "jupyter", reason: "the Backend setting is Jupyter server only", modules: missing };
  }
  if (!missing.length) return { where: "browser" };
  return provider(input, notInBrowser(missing), missing, notInBrowser(missing));
}

/** The module named by a `ModuleNotFoundError`, if that is what the run failed with. */
export function moduleNotFound(error: PythonError | undefined): string | undefined {
  if (error?.ename !== "ModuleNotFoundError") return undefined;
  const match = /No module named '([^'.]+)/.exec(error.evalue);
  return match?.[1];
}

/**
 * After a browser run failed with `ModuleNotFoundError` (an import the code made at run
 * time, which no static look could see): whether to try once more on the provider.
 */
export function routeAfterBrowserError(
  error: PythonError | undefined,
  input: Omit<RouteInput, "imports">,
): Route {
  const name = moduleNotFound(error);
  if (!name || input.backend !== "auto" || input.lockImports.has(name)) return { where: "browser" };
  return provider(input, notInBrowser([name]), [name], notInBrowser([name]));
}
