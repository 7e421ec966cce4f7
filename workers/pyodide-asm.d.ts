/** Pyodide's Emscripten module factory (the npm package ships no types for it). */
declare module "pyodide/pyodide.asm.mjs" {
  import type { loadPyodide } from "pyodide";
  const createPyodideModule: NonNullable<NonNullable<Parameters<typeof loadPyodide>[0]>["createPyodideModule"]>;
  export default createPyodideModule;
}
