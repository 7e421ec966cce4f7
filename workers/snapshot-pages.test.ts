import { describe, expect, it } from "vitest";
import { forEachStoredPage, joined, packSnapshot, PAGE_BYTES, storedSize } from "./snapshot-pages";

/** A snapshot-like array: zeros, with a few pages written (and a short last page). */
function sample(): Uint8Array {
  const bytes = new Uint8Array(PAGE_BYTES * 9 + 100);
  bytes.set([1, 2, 3, 4], 0);
  bytes[PAGE_BYTES * 3 + 17] = 9; // one byte in an otherwise empty page
  bytes.fill(5, PAGE_BYTES * 5, PAGE_BYTES * 7);
  bytes[PAGE_BYTES * 9 + 99] = 8; // the last, short page
  return bytes;
}

/** What `chunks` restore to, written into zeros as a new interpreter's memory is. */
function restored(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  forEachStoredPage(chunks, (offset, bytes) => out.set(bytes, offset));
  return out;
}

/** `bytes` cut into chunks of `length` (as a stream might deliver them). */
function chunked(bytes: Uint8Array, length: number): Uint8Array[] {
  const chunks = [];
  for (let at = 0; at < bytes.length; at += length) chunks.push(bytes.slice(at, at + length));
  return chunks;
}

describe("stored snapshots", () => {
  it("leave out pages of zeros, and restore to the same bytes", () => {
    const snapshot = sample();
    const stored = joined(packSnapshot(snapshot));
    // Header, a bitmap of 10 pages, and the five pages that are not zeros.
    expect(stored.length).toBe(16 + 2 + PAGE_BYTES * 4 + 100);
    expect(storedSize(stored)).toBe(snapshot.length);
    expect(restored([stored], snapshot.length)).toEqual(snapshot);
  });

  it("restore the same from any cut of the stored bytes into chunks", () => {
    const snapshot = sample();
    const stored = joined(packSnapshot(snapshot));
    for (const length of [1, 7, 16, 17, 4095, 4096, 5000]) {
      // Compared as buffers: element by element, 37 kB take seconds.
      expect(Buffer.compare(restored(chunked(stored, length), snapshot.length), snapshot), `chunks of ${length}`).toBe(0);
    }
  });

  it("are refused when not stored snapshots, cut short or longer than their header says", () => {
    const stored = joined(packSnapshot(sample()));
    const notOne = stored.slice();
    notOne.fill(7, 0, 8);
    expect(() => storedSize(notOne)).toThrow("it is not a snapshot");
    expect(() => forEachStoredPage([notOne], () => undefined)).toThrow("it is not a snapshot");
    expect(() => forEachStoredPage([stored.subarray(0, stored.length - 1)], () => undefined)).toThrow("shorter than its header says");
    expect(() => forEachStoredPage([stored, new Uint8Array(1)], () => undefined)).toThrow("longer than its header says");
  });

  it("store an unaligned view of a snapshot as they store its copy", () => {
    const snapshot = sample();
    const shifted = new Uint8Array(snapshot.length + 1);
    shifted.set(snapshot, 1);
    expect(joined(packSnapshot(shifted.subarray(1)))).toEqual(joined(packSnapshot(snapshot)));
  });
});
