/**
 * The Content-Security-Policy that the Python host frame for workers without network adds to
 * its document before it starts any worker (see python-host.ts). Its workers inherit it, and
 * so does every worker they start from a `data:` URL. Policies only add up: whatever the app's
 * own policy allows, a fetch must pass this one too, and nothing in the frame or a worker can
 * lift it. This module imports nothing, so that it can be checked on its own.
 */

/**
 * Every kind of fetch is denied (`default-src 'none'`, which each fetch directive falls back
 * to), except what starting a worker needs: the worker's first script is a `data:` URL
 * (`worker-src`), which imports the worker's code from a `blob:` URL made inside it (WebKit
 * refuses that import, and there the whole code is the `data:` URL), and Pyodide compiles
 * WebAssembly (`'wasm-unsafe-eval'`). Neither scheme reaches a host: their bytes are in the URL
 * or in memory. `connect-src` and `font-src` are named although `default-src` covers them, so
 * that an engine that lacked the fallback would still refuse them.
 *
 * `scriptOrigin` is for development only: there the worker imports its modules from the dev
 * server.
 */
export function networkOffPolicy(scriptOrigin?: string): string {
  return [
    "default-src 'none'",
    `script-src ${scriptOrigin ? `${scriptOrigin} ` : ""}blob: data: 'wasm-unsafe-eval'`,
    "worker-src data:",
    "connect-src 'none'",
    "font-src 'none'",
  ].join("; ");
}
