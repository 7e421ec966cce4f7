/**
 * Headers every response carries, in dev, preview and (see README) production.
 *
 * - COOP + COEP make pages cross-origin isolated, so SharedArrayBuffer exists (interrupts,
 *   `input()`, sleep).
 * - The Python worker runs with an opaque origin (`null`), so everything it fetches from
 *   us (its own module, Pyodide's core) is a cross-origin request: CORS and CORP allow it.
 */
export const isolationHeaders: Record<string, string> = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "cross-origin",
  "Access-Control-Allow-Origin": "*",
};
