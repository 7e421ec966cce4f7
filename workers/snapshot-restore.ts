import { createXXHash64 } from "hash-wasm";
import createPyodideModule from "pyodide/pyodide.asm.mjs";
import { forEachStoredPage, joined, packSnapshot, STORED_HEADER_BYTES, storedSize } from "./snapshot-pages";

type ModuleFactory = typeof createPyodideModule;

/**
 * The checksum kept with a snapshot: xxHash64 of its bytes, in hex. It is there to find a
 * damaged stored copy (not an attacker: whoever can write the page's storage runs the page),
 * and it is cheap enough to check on every start: a few milliseconds for 30 MB.
 */
async function checksumOf(parts: Uint8Array[]): Promise<string> {
  const hasher = (await createXXHash64()).init();
  for (const part of parts) hasher.update(part);
  return hasher.digest("hex");
}

/** A snapshot Pyodide made, as Kiln stores it (see snapshot-pages.ts), with its checksum. */
export async function storedSnapshot(snapshot: Uint8Array, asBlob: boolean): Promise<{ data: Blob | Uint8Array; checksum: string }> {
  const parts = packSnapshot(snapshot);
  return { data: asBlob ? new Blob(parts as Uint8Array<ArrayBuffer>[]) : joined(parts), checksum: await checksumOf(parts) };
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
 * id in the header, and reads its own state there). The stored snapshot (its pages that are
 * not zeros, see snapshot-pages.ts) is read and checksummed at once, while Pyodide's
 * WebAssembly is still compiling; the module is made with room for the whole heap, and the
 * pages read are written straight into its memory. A damaged copy throws before Pyodide uses
 * any of it.
 */
export function restoreWithoutCopies(data: Blob | ArrayBuffer, checksum: string): RestoreOptions {
  const malformed = () => new Error("it is not a snapshot (its header is malformed)");
  const header = data instanceof Blob ? data.slice(0, STORED_HEADER_BYTES).arrayBuffer() : Promise.resolve(data.slice(0, STORED_HEADER_BYTES));
  const size = header.then((bytes) => storedSize(new Uint8Array(bytes)));
  size.catch(() => undefined);
  // Let go of once written: Pyodide may keep its options (and this factory) for good.
  let whole: Promise<Uint8Array[]> | undefined = readChecked(data, checksum);
  whole.catch(() => undefined);
  // Pyodide copies what follows the header here into the heap too: the same bytes as the pages'.
  const prefix = new Uint8Array(PREFIX_BYTES);
  const factory = (async (settings: Parameters<ModuleFactory>[0]) => {
    if ((await size) < PREFIX_BYTES) throw malformed();
    // Pyodide sizes the memory from the bytes it was given: here, the prefix only.
    const module = await createPyodideModule(Object.assign(settings, { INITIAL_MEMORY: await size }));
    const heap = new Uint8Array((module as unknown as { HEAP8: Int8Array }).HEAP8.buffer);
    // The heap is the snapshot after its header, whose length the snapshot's first page gives.
    let heapOffset = -1;
    const chunks = await whole;
    whole = undefined;
    if (!chunks) throw new Error("it was restored once already");
    forEachStoredPage(chunks, (offset, bytes) => {
      if (heapOffset < 0) {
        heapOffset = offset === 0 && bytes.length >= 8 ? new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true) : 0;
        if (heapOffset < 16 || heapOffset % 16 || heapOffset > PREFIX_BYTES) throw malformed();
      }
      if (offset < PREFIX_BYTES) prefix.set(bytes.subarray(0, PREFIX_BYTES - offset), offset);
      const from = Math.max(offset, heapOffset);
      const end = offset + bytes.length;
      if (end - heapOffset > heap.length) throw new Error("it is larger than the memory made for it");
      if (end > from) heap.set(bytes.subarray(from - offset), from - heapOffset);
    });
    return module;
  }) as ModuleFactory;
  return { _loadSnapshot: prefix, createPyodideModule: factory };
}

/** All of `data`, in the chunks read; rejects if its xxHash64 is not `checksum`. */
async function readChecked(data: Blob | ArrayBuffer, checksum: string): Promise<Uint8Array[]> {
  const hasher = (await createXXHash64()).init();
  const chunks: Uint8Array[] = [];
  for await (const chunk of chunksOf(data)) {
    hasher.update(chunk);
    chunks.push(chunk);
  }
  if (hasher.digest("hex") !== checksum) throw new Error("its checksum does not match: the stored copy is damaged");
  return chunks;
}

/** A read of the snapshot that brings nothing for this long has stalled: the worker boots normally instead. */
const STALLED_READ_MS = 20_000;

/**
 * The bytes of `data`. A Blob is read as a stream (not into a reused buffer with a BYOB
 * reader: in Chromium such reads of one Blob by two workers at once sometimes never ended).
 */
async function* chunksOf(data: Blob | ArrayBuffer): AsyncGenerator<Uint8Array> {
  if (!(data instanceof Blob)) {
    yield new Uint8Array(data);
    return;
  }
  const reader = data.stream().getReader();
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
