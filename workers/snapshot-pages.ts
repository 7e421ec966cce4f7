/**
 * How Kiln stores a memory snapshot: without its pages of zeros. About half of a booted
 * interpreter's 30 MB heap is zeros, in whole 4 KiB pages. A new interpreter's memory is zeros
 * already (and costs nothing until written), so those pages are neither stored, read, nor
 * written on a restore.
 *
 * Layout (little-endian): a 16-byte header (the magic "KILNPAGE", the snapshot's size, the
 * page size), a bitmap with a bit for each page of the snapshot (set: the page is stored),
 * then the stored pages in order. The last page may be short.
 */

const MAGIC = "KILNPAGE";
const HEADER_BYTES = 16;
export const PAGE_BYTES = 4096;

const pagesOf = (size: number) => Math.ceil(size / PAGE_BYTES);

/** Whether `bytes` holds anything but zeros (its byte offset is a multiple of 4). */
function nonZero(bytes: Uint8Array): boolean {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
  for (let i = 0; i < words.length; i++) if (words[i]) return true;
  for (let i = words.length << 2; i < bytes.length; i++) if (bytes[i]) return true;
  return false;
}

/** `snapshot` as stored: its header, its bitmap, and views of its pages that are not all zeros. */
export function packSnapshot(snapshot: Uint8Array): Uint8Array[] {
  // Views of it are read word by word.
  const bytes = snapshot.byteOffset % 4 ? snapshot.slice() : snapshot;
  const header = new Uint8Array(HEADER_BYTES);
  header.set(new TextEncoder().encode(MAGIC));
  const fields = new DataView(header.buffer);
  fields.setUint32(8, bytes.length, true);
  fields.setUint32(12, PAGE_BYTES, true);
  const bitmap = new Uint8Array(Math.ceil(pagesOf(bytes.length) / 8));
  const pages: Uint8Array[] = [];
  for (let page = 0; page * PAGE_BYTES < bytes.length; page++) {
    const content = bytes.subarray(page * PAGE_BYTES, (page + 1) * PAGE_BYTES);
    if (!nonZero(content)) continue;
    bitmap[page >> 3] |= 1 << (page & 7);
    pages.push(content);
  }
  return [header, bitmap, ...pages];
}

/** The parts of {@link packSnapshot} as one array. */
export function joined(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}

/** The size of the snapshot stored in `header` (its first 16 bytes); throws if they are not such a header. */
export function storedSize(header: Uint8Array): number {
  const magic = new TextDecoder().decode(header.subarray(0, MAGIC.length));
  const fields = new DataView(header.buffer, header.byteOffset, header.byteLength);
  if (header.length < HEADER_BYTES || magic !== MAGIC || fields.getUint32(12, true) !== PAGE_BYTES) {
    throw new Error("it is not a snapshot (its header is malformed)");
  }
  return fields.getUint32(8, true);
}

export const STORED_HEADER_BYTES = HEADER_BYTES;

/** Reads a stored snapshot's bytes, given as the chunks they were read in, in order. */
class ChunkReader {
  private chunk = 0;
  private at = 0;
  constructor(private readonly chunks: Uint8Array[]) {}

  /** The next `length` bytes: a view where they lie in one chunk, else copied into `spare`. */
  next(length: number, spare: Uint8Array): Uint8Array {
    const current = this.chunks[this.chunk];
    if (current && this.at + length <= current.length) {
      const view = current.subarray(this.at, this.at + length);
      this.advance(length);
      return view;
    }
    const into = spare.subarray(0, length);
    for (let filled = 0; filled < length; ) {
      const from = this.chunks[this.chunk];
      if (!from) throw new Error("it is shorter than its header says");
      const take = Math.min(length - filled, from.length - this.at);
      into.set(from.subarray(this.at, this.at + take), filled);
      filled += take;
      this.advance(take);
    }
    return into;
  }

  get done(): boolean {
    return this.chunk >= this.chunks.length;
  }

  private advance(length: number): void {
    this.at += length;
    while (this.chunks[this.chunk] && this.at >= this.chunks[this.chunk].length) {
      this.at -= this.chunks[this.chunk].length;
      this.chunk += 1;
    }
  }
}

/**
 * Calls `write(offset, bytes)` for each stored page of the snapshot whose stored bytes are
 * `chunks`, in order, with its offset in the snapshot (`bytes` may be reused after the call).
 */
export function forEachStoredPage(chunks: Uint8Array[], write: (offset: number, bytes: Uint8Array) => void): void {
  const reader = new ChunkReader(chunks);
  const spare = new Uint8Array(PAGE_BYTES);
  const size = storedSize(reader.next(HEADER_BYTES, spare).slice());
  const pages = pagesOf(size);
  const bitmap = reader.next(Math.ceil(pages / 8), new Uint8Array(Math.ceil(pages / 8))).slice();
  for (let page = 0; page < pages; page++) {
    if (!(bitmap[page >> 3] & (1 << (page & 7)))) continue;
    const offset = page * PAGE_BYTES;
    write(offset, reader.next(Math.min(PAGE_BYTES, size - offset), spare));
  }
  if (!reader.done) throw new Error("it is longer than its header says");
}
