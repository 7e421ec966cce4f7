import { safeRelativePath } from "../../workers/file-paths";
import type { FileInfo } from "../../workers/python-api";
import {
  deleteStoredFiles,
  getStoredFile,
  readStoredFiles,
  storeFile,
  storeFiles,
  type StoredFile,
  type StoredRecord,
} from "../storage/files";
import { batches, FileBudget, limitNotice, planSave, someOf, type Refusal, type SizedFile } from "./file-limits";
import { formatBytes } from "./output-model";
import type { PythonSession } from "./python-session";

/** What the Files list shows of one file. */
export interface FileEntry {
  path: string;
  size: number;
  modifiedAt: number;
}

export interface FilesState {
  files: FileEntry[];
  /** What is going on ("Uploading data.csv: 45%"), or empty. */
  progress: string;
  /** The last problem, for the person to read, or empty. */
  problem: string;
}

/**
 * A scope's files (a conversation's, the Playground's): kept in IndexedDB, put into every
 * worker of the session as it starts (all in one call), and saved back after each run (in
 * batches: one call to the worker and one transaction each), within the limits of
 * file-limits.ts. Another tab of the same scope that saves or deletes files says so, and this
 * tab's list and Python follow.
 */
export class SessionFiles {
  private state: FilesState = { files: [], progress: "", problem: "" };
  private readonly listeners = new Set<() => void>();
  /** What storage keeps of this scope, as this tab last read or wrote it: path → entry. */
  private stored = new Map<string, FileEntry>();
  /** The worker's files as last seen: path → size and mtime. */
  private seen = new Map<string, string>();
  /** The saved version of each file that this tab's Python has: path → size and modification time. */
  private held = new Map<string, string>();
  /** Another tab changed the saved files since this tab's Python last caught up with them. */
  private behind = false;
  /** Counts this tab's changes to the saved files (and other tabs' it followed). */
  private changes = 0;
  private work: Promise<unknown> = Promise.resolve();

  constructor(
    readonly scope: string,
    readonly session: PythonSession,
  ) {
    // Read while the first worker boots; used by its setup unless the files changed meanwhile.
    let early: { records: Promise<StoredRecord[]>; changes: number } | undefined = { records: readStoredFiles(scope), changes: 0 };
    early.records.catch(() => undefined);
    session.setWorkerSetup(async (api) => {
      let records: StoredRecord[];
      for (;;) {
        // Read again when this tab changed the saved files while they were read.
        const changes = this.changes;
        records = await (early?.changes === changes ? early.records : readStoredFiles(scope));
        early = undefined;
        if (changes === this.changes) break;
      }
      this.stored = new Map(records.map((file) => [file.path, entry(file)]));
      this.held = new Map(records.map((file) => [file.path, version(file)]));
      this.publish({ files: this.listing() });
      // All in one call: the worker reads the Blobs itself, and takes the bytes as they are.
      const problem = await api.writeFiles(records.map(({ path, data }) => ({ path, data }))).then(
        () => "",
        (error: unknown) => describe(error),
      );
      this.seen = new Map((await api.listFiles()).map((file) => [file.path, stamp(file)]));
      if (problem) this.publish({ problem });
    });
  }

  get current(): FilesState {
    return this.state;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Add files the person picked or dropped: saved, then put into Python's working directory. */
  upload(files: readonly File[]): Promise<void> {
    return this.serial(async () => {
      const problems: string[] = [];
      const added = new Set<string>();
      const refused: { file: SizedFile; reason: Refusal }[] = [];
      let budget = this.budget();
      for (const file of files) {
        const path = safeRelativePath(file.name);
        if (!path) {
          problems.push(`${JSON.stringify(file.name)} is not a usable file name.`);
          continue;
        }
        const reason = budget.admit({ path, size: file.size });
        if (reason) {
          refused.push({ file: { path, size: file.size }, reason });
          continue;
        }
        // Saved and put into Python at once: the worker reads the file itself.
        const progress = `Uploading ${path} (${formatBytes(file.size)})…`;
        this.publish({ progress });
        // Settles to the failure, if any: a worker that goes away meanwhile gets the file below.
        const written = this.session.writeFile(path, file).then(
          () => undefined,
          (error: unknown) => error,
        );
        const saved = { scope: this.scope, path, data: file, size: file.size, modifiedAt: file.lastModified || Date.now() };
        try {
          await storeFile(saved);
          this.changes += 1;
          this.held.set(path, version(saved));
          this.stored.set(path, entry(saved));
        } catch (error) {
          problems.push(describe(error));
          budget = this.budget();
          // Not kept, so not left in Python either: the saved file of that name, if any, goes back.
          const previous = await getStoredFile(this.scope, path).catch(() => undefined);
          if ((await written) === undefined)
            await (previous ? this.session.writeFile(path, previous.data) : this.session.deleteFile(path)).catch(() => undefined);
          continue;
        }
        // Listed as soon as it is saved, even while Python is still starting.
        this.refresh(problems.join(" "), progress);
        // Written again into the worker that is there now: one that replaced the first takes it (a
        // failure of Python's own fails again, and is reported).
        if ((await written) !== undefined) await this.session.writeFile(path, file);
        added.add(path);
      }
      // Known as they are now, so the next sync does not read them back.
      if (added.size) for (const file of await this.session.listFiles()) if (added.has(file.path)) this.seen.set(file.path, stamp(file));
      if (added.size) announce(this.scope);
      this.refresh([...problems, limitNotice(refused, "uploaded")].filter(Boolean).join(" "));
    });
  }

  /**
   * Save what Python created, changed or deleted (call after each run): deletions in one
   * transaction, then the new and changed files that the limits leave room for, read from the
   * worker and saved a batch at a time. Those left out are named, and tried again after the next
   * run (when files were deleted meanwhile, they may fit).
   */
  sync(): Promise<void> {
    return this.serial(async () => {
      const problems: string[] = [];
      let changed = false;
      const now = await this.session.listFiles();
      // Deleted first: that makes room.
      const present = new Set(now.map((file) => file.path));
      const gone = [...this.seen.keys()].filter((path) => !present.has(path));
      if (gone.length) {
        await deleteStoredFiles(this.scope, gone);
        this.changes += 1;
        for (const path of gone) this.forget(path);
        changed = true;
      }
      const candidates: FileInfo[] = [];
      const tooLarge: FileInfo[] = [];
      for (const file of now) {
        if (this.seen.get(file.path) === stamp(file)) continue;
        // A name from the worker: only one that stays in the working directory and shows as it reads.
        if (safeRelativePath(file.path) !== file.path || /\p{Cf}/u.test(file.path)) continue;
        if (file.size > MAX_SAVED_FILE_BYTES) {
          // Said once per version of the file: it stays as it is in Python's folder.
          this.seen.set(file.path, stamp(file));
          tooLarge.push(file);
        } else candidates.push(file);
      }
      if (tooLarge.length === 1) {
        const [file] = tooLarge;
        problems.push(
          `${file.path} (${formatBytes(file.size)}) is not saved: Kiln saves the files Python writes up to ${formatBytes(MAX_SAVED_FILE_BYTES)}. ` +
            "It stays in Python's folder until Python restarts.",
        );
      } else if (tooLarge.length) {
        problems.push(
          `${tooLarge.length} files are not saved (${someOf(tooLarge.map((file) => file.path))}): Kiln saves the files Python writes up to ` +
            `${formatBytes(MAX_SAVED_FILE_BYTES)} each. They stay in Python's folder until Python restarts.`,
        );
      }
      const { admitted, refused } = planSave(this.budget(), candidates, (path) => this.stored.has(path));
      for (const batch of batches(admitted)) {
        const listed = new Map(batch.map((file) => [file.path, file]));
        const records: StoredRecord[] = [];
        for (const { path, data } of await this.session.readFiles(batch.map((file) => file.path))) {
          const file = listed.get(path);
          // Only files asked for, each once, at the size listed: one changed since is saved after the next run.
          if (!file || data.byteLength !== file.size) continue;
          listed.delete(path);
          records.push({ scope: this.scope, path, data: keptAs(data), size: data.byteLength, modifiedAt: file.mtimeMs });
        }
        try {
          await storeFiles(records);
          this.changes += 1;
        } catch (error) {
          // Nothing of this batch is kept (nor of those after it); all saved before is.
          problems.push(describe(error));
          break;
        }
        for (const record of records) {
          this.seen.set(record.path, stamp({ size: record.size, mtimeMs: record.modifiedAt }));
          this.held.set(record.path, version(record));
          this.stored.set(record.path, entry(record));
        }
        if (records.length) changed = true;
      }
      problems.push(limitNotice(refused, "saved"));
      if (changed) announce(this.scope);
      // What another tab saved meanwhile, now that the run is over.
      if (this.behind) await this.catchUp();
      this.refresh(problems.filter(Boolean).join(" "));
    });
  }

  remove(path: string): Promise<void> {
    return this.removeAll([path]);
  }

  /** Delete files: from storage in one transaction, then from Python in one call. */
  removeAll(paths: readonly string[]): Promise<void> {
    return this.serial(async () => {
      await deleteStoredFiles(this.scope, paths);
      this.changes += 1;
      for (const path of paths) this.stored.delete(path);
      announce(this.scope);
      this.refresh("");
      await this.session.deleteFiles([...paths]);
      for (const path of paths) this.forget(path);
    });
  }

  /**
   * Another tab saved or deleted files of this scope: listed here at once, and put into (or
   * taken out of) this tab's Python between runs, so that it has them if it runs next. A run
   * under way is not changed under it: its Python catches up once it has ended and its own
   * changes are saved.
   */
  follow(): void {
    this.behind = true;
    this.changes += 1;
    void readStoredFiles(this.scope).then(
      (records) => this.take(records),
      () => undefined,
    );
    if (this.session.currentState.kind !== "running") void this.serial(() => (this.behind ? this.catchUp() : Promise.resolve()));
  }

  /** Bring this tab's Python to the saved files, but for files its Python changed since they were saved. */
  private async catchUp(): Promise<void> {
    this.behind = false;
    const records = await readStoredFiles(this.scope);
    const inPython = new Map((await this.session.listFiles()).map((file) => [file.path, stamp(file)]));
    const untouched = (path: string) => inPython.get(path) === this.seen.get(path);
    const newer = records.filter((file) => this.held.get(file.path) !== version(file) && untouched(file.path));
    const versions = newer.map((file) => [file.path, version(file)] as const);
    await this.session.writeFiles(newer.map(({ path, data }) => ({ path, data })));
    for (const [path, saved] of versions) this.held.set(path, saved);
    const present = new Set(records.map((file) => file.path));
    const gone = [...this.held.keys()].filter((path) => !present.has(path));
    for (const path of gone) this.held.delete(path);
    const untouchedGone = gone.filter(untouched);
    await this.session.deleteFiles(untouchedGone).catch(() => undefined);
    for (const path of untouchedGone) this.seen.delete(path);
    // Known as they are now, so the next sync does not save them back.
    const written = new Set(versions.map(([path]) => path));
    for (const file of await this.session.listFiles()) if (written.has(file.path)) this.seen.set(file.path, stamp(file));
    this.take(records);
  }

  /** The saved content of a file, for downloading. */
  async blob(path: string): Promise<Blob | undefined> {
    return (await getStoredFile(this.scope, path))?.data;
  }

  /** What storage holds now, as read: listed. */
  private take(records: readonly StoredRecord[]): void {
    this.stored = new Map(records.map((file) => [file.path, entry(file)]));
    this.publish({ files: this.listing() });
  }

  private forget(path: string): void {
    this.seen.delete(path);
    this.held.delete(path);
    this.stored.delete(path);
  }

  private budget(): FileBudget {
    return new FileBudget(this.stored.values());
  }

  private listing(): FileEntry[] {
    collator ??= new Intl.Collator();
    const compare = collator.compare;
    return [...this.stored.values()].sort((a, b) => compare(a.path, b.path));
  }

  /** The kept files listed; `progress` says what is still going on. */
  private refresh(problem: string, progress = ""): void {
    this.publish({ files: this.listing(), progress, problem });
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const next = this.work.then(task).catch((error: unknown) => {
      this.publish({ progress: "", problem: describe(error) });
    });
    this.work = next;
    return next;
  }

  private publish(change: Partial<FilesState>): void {
    this.state = { ...this.state, ...change };
    for (const listener of this.listeners) listener();
  }
}

let collator: Intl.Collator | undefined;

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Files Python writes up to this size are kept as bytes in their record, which a start reads
 * with the rest and hands to the worker at once; larger ones as Blobs, which the worker reads
 * itself, so that the page never holds their bytes.
 */
const INLINE_BYTES = 16 * 2 ** 10;

/** Bytes from the worker as they are kept: an ArrayBuffer of their own, or a Blob. */
function keptAs(data: Uint8Array): Blob | ArrayBuffer {
  if (data.byteLength > INLINE_BYTES) return new Blob([data as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" });
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer;
  return whole ? (data.buffer as ArrayBuffer) : data.slice().buffer;
}

/**
 * The largest file that Python writes which is saved: each is read into the page and stored
 * on its main thread, which a 600 MB file held for about 4 s (and 1.5 GB for minutes), and a
 * file that large would fill the site's storage. Uploads have no such limit (the browser
 * stores the person's own file as it is).
 */
export const MAX_SAVED_FILE_BYTES = 256 * 2 ** 20;

const stamp = (file: { size: number; mtimeMs: number }) => `${file.size}:${file.mtimeMs}`;
const version = (file: { size: number; modifiedAt: number }) => `${file.size}:${file.modifiedAt}`;
const entry = (file: Omit<StoredFile, "data">): FileEntry => ({ path: file.path, size: file.size, modifiedAt: file.modifiedAt });

const registry = new Map<string, SessionFiles>();

/** Tabs tell each other which scope's saved files changed. */
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("kiln-files") : undefined;
const announce = (scope: string) => channel?.postMessage({ scope });
channel?.addEventListener("message", (event: MessageEvent<{ scope?: unknown }>) => {
  const scope = event.data?.scope;
  if (typeof scope === "string") void registry.get(scope)?.follow();
});

/** A scope's session ended for good (its conversation deleted): its files object lets go of it and its saved state. */
export function forgetSessionFiles(scope: string): void {
  registry.delete(scope);
}

/** The files of `scope`, tied to its session for as long as that session lasts. */
export function getSessionFiles(scope: string, session: PythonSession): SessionFiles {
  let files = registry.get(scope);
  if (!files || files.session !== session) {
    files = new SessionFiles(scope, session);
    registry.set(scope, files);
  }
  return files;
}
