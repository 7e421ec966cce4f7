import { createXXHash64 } from "hash-wasm";
import createPyodideModule from "pyodide/pyodide.asm.mjs";

type ModuleFactory = typeof createPyodideModule;

/**
 * The checksum kept with a snapshot: xxHash64 of its bytes, in hex. It is there to find a
 * damaged stored copy (not an attacker: whoever can write the page's storage runs the page),
 * and it is cheap enough to check on every start: a few milliseconds for 30 MB.
 */
export async function snapshotChecksum(bytes: Uint8Array): Promise<string> {
  return (await createXXHash64()).init().update(bytes).digest("hex");
}

/** Pyodide's options that restore a snapshot (experimental; see src/runtime/boot-snapshot.ts). */
export interface RestoreOptions {
  _loadSnapshot: Uint8Array;
  createPyodideModule: ModuleFactory;
}

/** A snapshot starts with its header: a magic number, the heap's offset, Pyodide's build id and its JavaScript-side state (128 bytes as Kiln boots it). */
const PREFIX_BYTES = 64 << 10;

/**
 * Restores a snapshot without copies of it. Pyodide's own restore wants the whole snapshot
 * as bytes, then copies them into the new interpreter's memory: a 30 MB read and a 30 MB
 * copy, which on a machine slow to hand out fresh memory costs more than the rest of a start.
 * Here Pyodide gets only the snapshot's first bytes (it checks the magic number and its build
 * id in the header, and reads its own state there), read while the module is made. The
 * module is made with room for the whole heap, and the heap is streamed from the Blob
 * straight into its memory, checksummed on the way. A damaged copy throws before Pyodide
 * uses any of it.
 */
export function restoreWithoutCopies(data: Blob | ArrayBuffer, checksum: string): RestoreOptions {
  const size = data instanceof Blob ? data.size : data.byteLength;
  // Pyodide copies what follows the header here into the heap too: the same bytes as the stream's.
  const prefix = new Uint8Array(Math.min(size, PREFIX_BYTES) & ~15);
  const prefixRead = (data instanceof Blob ? data.slice(0, prefix.length).arrayBuffer() : Promise.resolve(data.slice(0, prefix.length))).then(
    (bytes) => prefix.set(new Uint8Array(bytes)),
  );
  prefixRead.catch(() => undefined);
  const factory = (async (settings: Parameters<ModuleFactory>[0]) => {
    // Pyodide sizes the memory from the bytes it was given: here, the prefix only.
    const module = await createPyodideModule(Object.assign(settings, { INITIAL_MEMORY: size }));
    await prefixRead;
    const heapOffset = prefix.length >= 16 ? new Uint32Array(prefix.buffer, 0, 4)[1] : 0;
    if (heapOffset < 16 || heapOffset % 16 || heapOffset > prefix.length) throw new Error("it is not a snapshot (its header is malformed)");
    const heap = new Uint8Array((module as unknown as { HEAP8: Int8Array }).HEAP8.buffer);
    const hasher = (await createXXHash64()).init().update(prefix.subarray(0, heapOffset));
    let at = 0;
    for await (const chunk of chunksOf(data, heapOffset)) {
      if (at + chunk.length > heap.length) throw new Error("it is larger than the memory made for it");
      heap.set(chunk, at);
      hasher.update(chunk);
      at += chunk.length;
    }
    if (hasher.digest("hex") !== checksum) throw new Error("its checksum does not match: the stored copy is damaged");
    return module;
  }) as ModuleFactory;
  return { _loadSnapshot: prefix, createPyodideModule: factory };
}

/** A read of the snapshot that brings nothing for this long has stalled: the worker boots normally instead. */
const STALLED_READ_MS = 20_000;

/**
 * The bytes of `data` from `start`. A Blob is read as a stream (not into a reused buffer with a
 * BYOB reader: in Chromium such reads of one Blob by two workers at once sometimes never ended).
 */
async function* chunksOf(data: Blob | ArrayBuffer, start: number): AsyncGenerator<Uint8Array> {
  if (!(data instanceof Blob)) {
    yield new Uint8Array(data, start);
    return;
  }
  const reader = data.slice(start).stream().getReader();
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("reading it stalled")), STALLED_READ_MS);
    });
    const { value, done } = await Promise.race([reader.read(), stalled]).finally(() => clearTimeout(timer));
    if (done) return;
    yield value;
  }
}
