import { safeRelativePath } from "../../workers/file-paths";
import { deleteStoredFile, getStoredFile, listStoredFiles, storeFile, type StoredFile } from "../storage/files";
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
 * worker of the session as it starts, and saved back after each run. Another tab of the same
 * scope that saves or deletes one says so, and this tab's list and Python follow.
 */
export class SessionFiles {
  private state: FilesState = { files: [], progress: "", problem: "" };
  private readonly listeners = new Set<() => void>();
  /** The worker's files as last seen: path → size and mtime. */
  private seen = new Map<string, string>();
  /** The saved version of each file that this tab's Python has: path → size and modification time. */
  private held = new Map<string, string>();
  /** Another tab changed the saved files since this tab's Python last caught up with them. */
  private behind = false;
  private work: Promise<unknown> = Promise.resolve();

  constructor(
    readonly scope: string,
    readonly session: PythonSession,
  ) {
    session.setWorkerSetup(async (api) => {
      const stored = await listStoredFiles(scope);
      // Blobs: the worker reads each itself.
      for (const file of stored) await api.writeFile(file.path, file.data);
      this.seen = new Map((await api.listFiles()).map((file) => [file.path, stamp(file)]));
      this.held = new Map(stored.map((file) => [file.path, version(file)]));
      this.publish({ files: stored.map(entry) });
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
      for (const file of files) {
        const path = safeRelativePath(file.name);
        if (!path) {
          problems.push(`${JSON.stringify(file.name)} is not a usable file name.`);
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
          this.held.set(path, version(saved));
        } catch (error) {
          problems.push(error instanceof Error ? error.message : String(error));
          // Not kept, so not left in Python either: the saved file of that name, if any, goes back.
          const previous = await getStoredFile(this.scope, path).catch(() => undefined);
          if ((await written) === undefined)
            await (previous ? this.session.writeFile(path, previous.data) : this.session.deleteFile(path)).catch(() => undefined);
          continue;
        }
        // Listed as soon as it is saved, even while Python is still starting.
        await this.refresh(problems.join(" "), progress);
        // Written again into the worker that is there now: one that replaced the first takes it (a
        // failure of Python's own fails again, and is reported).
        if ((await written) !== undefined) await this.session.writeFile(path, file);
        added.add(path);
      }
      // Known as they are now, so the next sync does not read them back.
      for (const file of await this.session.listFiles()) if (added.has(file.path)) this.seen.set(file.path, stamp(file));
      if (added.size) announce(this.scope);
      await this.refresh(problems.join(" "));
    });
  }

  /** Save what Python created, changed or deleted (call after each run). */
  sync(): Promise<void> {
    return this.serial(async () => {
      const problems: string[] = [];
      let changed = false;
      const now = await this.session.listFiles();
      for (const file of now) {
        if (this.seen.get(file.path) === stamp(file)) continue;
        // A name from the worker: only one that stays in the working directory and shows as it reads.
        if (safeRelativePath(file.path) !== file.path || /\p{Cf}/u.test(file.path)) continue;
        if (file.size > MAX_SAVED_FILE_BYTES) {
          // Said once per version of the file: it stays as it is in Python's folder.
          this.seen.set(file.path, stamp(file));
          problems.push(
            `${file.path} (${formatBytes(file.size)}) is not saved: Kiln saves the files Python writes up to ${formatBytes(MAX_SAVED_FILE_BYTES)}. ` +
              "It stays in Python's folder until Python restarts.",
          );
          continue;
        }
        const data = await this.session.readFile(file.path);
        try {
          const blob = new Blob([data as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" });
          const saved = { scope: this.scope, path: file.path, data: blob, size: data.byteLength, modifiedAt: file.mtimeMs };
          await storeFile(saved);
          this.seen.set(file.path, stamp(file));
          this.held.set(file.path, version(saved));
          changed = true;
        } catch (error) {
          problems.push(error instanceof Error ? error.message : String(error));
        }
      }
      const present = new Set(now.map((file) => file.path));
      for (const path of [...this.seen.keys()].filter((path) => !present.has(path))) {
        await deleteStoredFile(this.scope, path);
        this.seen.delete(path);
        this.held.delete(path);
        changed = true;
      }
      if (changed) announce(this.scope);
      // What another tab saved meanwhile, now that the run is over.
      if (this.behind) await this.catchUp();
      await this.refresh(problems.join(" "));
    });
  }

  remove(path: string): Promise<void> {
    return this.serial(async () => {
      await deleteStoredFile(this.scope, path);
      announce(this.scope);
      await this.session.deleteFile(path);
      this.seen.delete(path);
      this.held.delete(path);
      await this.refresh("");
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
    void listStoredFiles(this.scope).then(
      (stored) => this.publish({ files: stored.map(entry) }),
      () => undefined,
    );
    if (this.session.currentState.kind !== "running") void this.serial(() => (this.behind ? this.catchUp() : Promise.resolve()));
  }

  /** Bring this tab's Python to the saved files, but for files its Python changed since they were saved. */
  private async catchUp(): Promise<void> {
    this.behind = false;
    const stored = await listStoredFiles(this.scope);
    const inPython = new Map((await this.session.listFiles()).map((file) => [file.path, stamp(file)]));
    const untouched = (path: string) => inPython.get(path) === this.seen.get(path);
    const written = new Set<string>();
    for (const file of stored) {
      if (this.held.get(file.path) === version(file) || !untouched(file.path)) continue;
      await this.session.writeFile(file.path, file.data);
      this.held.set(file.path, version(file));
      written.add(file.path);
    }
    const present = new Set(stored.map((file) => file.path));
    for (const path of [...this.held.keys()].filter((path) => !present.has(path))) {
      this.held.delete(path);
      if (!untouched(path)) continue;
      await this.session.deleteFile(path).catch(() => undefined);
      this.seen.delete(path);
    }
    // Known as they are now, so the next sync does not save them back.
    for (const file of await this.session.listFiles()) if (written.has(file.path)) this.seen.set(file.path, stamp(file));
    this.publish({ files: stored.map(entry) });
  }

  /** The saved content of a file, for downloading. */
  async blob(path: string): Promise<Blob | undefined> {
    return (await getStoredFile(this.scope, path))?.data;
  }

  /** The saved files listed anew; `progress` says what is still going on. */
  private async refresh(problem: string, progress = ""): Promise<void> {
    this.publish({ files: (await listStoredFiles(this.scope)).map(entry), progress, problem });
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const next = this.work.then(task).catch((error: unknown) => {
      this.publish({ progress: "", problem: error instanceof Error ? error.message : String(error) });
    });
    this.work = next;
    return next;
  }

  private publish(change: Partial<FilesState>): void {
    this.state = { ...this.state, ...change };
    for (const listener of this.listeners) listener();
  }
}

/**
 * The largest file that Python writes which is saved: each is read into the page and stored
 * on its main thread, which a 600 MB file held for about 4 s (and 1.5 GB for minutes), and a
 * file that large would fill the site's storage. Uploads have no such limit (the browser
 * stores the person's own file as it is).
 */
const MAX_SAVED_FILE_BYTES = 256 * 2 ** 20;

const stamp = (file: { size: number; mtimeMs: number }) => `${file.size}:${file.mtimeMs}`;
const version = (file: { size: number; modifiedAt: number }) => `${file.size}:${file.modifiedAt}`;
const entry = (file: StoredFile): FileEntry => ({ path: file.path, size: file.size, modifiedAt: file.modifiedAt });

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
