import type { FetchedFile } from "./python-api";

/**
 * Pyodide's WebAssembly module, compiled by the worker itself as soon as its bytes arrive,
 * when its frame could not compile it (see src/host/python-host.ts). Undefined if it cannot
 * be compiled here either; Pyodide then compiles it itself.
 */
export function compileEarly(file: Promise<FetchedFile>): Promise<WebAssembly.Module | undefined> {
  return file.then(({ ok, body }) => (ok ? compileWasm(body) : undefined)).catch(() => undefined);
}

/** `body` compiled as it streams in; undefined if it cannot be. */
export function compileWasm(body: Blob | ArrayBuffer): Promise<WebAssembly.Module | undefined> {
  return WebAssembly.compileStreaming(new Response(body, { headers: { "content-type": "application/wasm" } })).catch(() => undefined);
}

type Instantiate = typeof WebAssembly.instantiateStreaming;

/**
 * Runs `boot` (Pyodide's start-up) with its one `WebAssembly.instantiateStreaming` call
 * answered from `compiled`, then puts the browser's own function back.
 */
export async function withCompiledWasm<T>(compiled: Promise<WebAssembly.Module | undefined>, boot: () => Promise<T>): Promise<T> {
  const wasm = WebAssembly as { instantiateStreaming: Instantiate };
  const original = wasm.instantiateStreaming;
  wasm.instantiateStreaming = async (source, imports) => {
    wasm.instantiateStreaming = original;
    const module = await compiled;
    if (!module) return original(source, imports);
    return { module, instance: await WebAssembly.instantiate(module, imports) };
  };
  try {
    return await boot();
  } finally {
    wasm.instantiateStreaming = original;
  }
}
