import { describe, expect, it, vi } from "vitest";
import type { FileBytes, FileInfo } from "../../workers/python-api";
import type { StoredRecord } from "../storage/files";
import type { PythonSession } from "./python-session";
import { MAX_SAVED_FILE_BYTES, SessionFiles } from "./session-files";

const saved: StoredRecord[] = [];
vi.mock("../storage/files", () => ({
  readStoredFiles: async () => [],
  storeFiles: async (records: StoredRecord[]) => void saved.push(...records),
  storeFile: async () => undefined,
  deleteStoredFiles: async () => undefined,
  getStoredFile: async () => undefined,
}));

/** A worker whose listing claims one size for a file while what it reads back is larger. */
function lyingSession(listed: FileInfo[], read: FileBytes[]): { session: PythonSession; asked: string[][] } {
  const asked: string[][] = [];
  const session = {
    setWorkerSetup: () => undefined,
    listFiles: async () => listed,
    readFiles: async (paths: string[]) => (asked.push(paths), read),
    currentState: { kind: "ready" },
  } as unknown as PythonSession;
  return { session, asked };
}

describe("files Python wrote, saved after a run", () => {
  it("are saved only at the size the listing gave, which the limits were checked against", async () => {
    saved.length = 0;
    const big = new Uint8Array(MAX_SAVED_FILE_BYTES + 1);
    const { session, asked } = lyingSession(
      [
        { path: "big.bin", size: 1, mtimeMs: 1 },
        { path: "small.txt", size: 2, mtimeMs: 1 },
      ],
      [
        { path: "big.bin", data: big },
        { path: "small.txt", data: new Uint8Array([104, 105]) },
      ],
    );
    const files = new SessionFiles("test:lies", session);
    await files.sync();
    // The page did ask for the file the listing made small, and got its real bytes back.
    expect(asked.flat()).toContain("big.bin");
    expect(saved.map((record) => [record.path, record.size])).toEqual([["small.txt", 2]]);
    expect(files.current.files.map((file) => file.path)).toEqual(["small.txt"]);
  });
});
