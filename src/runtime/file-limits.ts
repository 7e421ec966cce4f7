/**
 * How many files, and how many bytes of them, a scope (a conversation, the Playground) keeps.
 * Every kept file is written into each new worker as it starts, so what is kept bounds how
 * long a start takes: with 10 000 small files it is under a second more than with none.
 */
import { formatBytes } from "./output-model";

export const MAX_FILES = 10_000;
export const MAX_TOTAL_BYTES = 512 * 2 ** 20;

/**
 * Files Python wrote are read from the worker and saved in batches of at most this many bytes
 * (and {@link MAX_FILES} files): one call to the worker and one transaction each.
 */
export const BATCH_BYTES = 32 * 2 ** 20;

export interface SizedFile {
  path: string;
  size: number;
}

/** Why a file was not kept. */
export type Refusal = "files" | "bytes";

/** What a scope keeps: its files' sizes, against the limits. */
export class FileBudget {
  private readonly sizes: Map<string, number>;
  private bytes = 0;

  constructor(
    kept: Iterable<SizedFile>,
    private readonly maxFiles = MAX_FILES,
    private readonly maxBytes = MAX_TOTAL_BYTES,
  ) {
    this.sizes = new Map([...kept].map((file) => [file.path, file.size]));
    for (const size of this.sizes.values()) this.bytes += size;
  }

  get count(): number {
    return this.sizes.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  /** Take `file` in (a new file, or a new version of a kept one) when the limits allow it; else why not. */
  admit(file: SizedFile): Refusal | undefined {
    const previous = this.sizes.get(file.path);
    if (previous === undefined && this.sizes.size >= this.maxFiles) return "files";
    const bytes = this.bytes - (previous ?? 0) + file.size;
    // A new version no larger than the last one always fits (the limits may have been passed before they existed).
    if (bytes > this.maxBytes && file.size > (previous ?? 0)) return "bytes";
    this.sizes.set(file.path, file.size);
    this.bytes = bytes;
    return undefined;
  }

  release(path: string): void {
    this.bytes -= this.sizes.get(path) ?? 0;
    this.sizes.delete(path);
  }
}

/**
 * Which of `files` (changed or new) fit in `budget`, which is updated: new versions of kept files
 * first (they add no file), then new files by path, so the same ones are kept each time.
 */
export function planSave<T extends SizedFile>(budget: FileBudget, files: readonly T[], kept: (path: string) => boolean) {
  const order = [...files].sort((a, b) => Number(kept(b.path)) - Number(kept(a.path)) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const admitted: T[] = [];
  const refused: { file: T; reason: Refusal }[] = [];
  for (const file of order) {
    const reason = budget.admit(file);
    if (reason) refused.push({ file, reason });
    else admitted.push(file);
  }
  return { admitted, refused };
}

/** `files` in order, cut into batches of at most `maxBytes` (a larger file alone) and `maxCount` files. */
export function batches<T extends SizedFile>(files: readonly T[], maxBytes = BATCH_BYTES, maxCount = MAX_FILES): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const file of files) {
    if (batch.length && (bytes + file.size > maxBytes || batch.length >= maxCount)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(file);
    bytes += file.size;
  }
  if (batch.length) out.push(batch);
  return out;
}

/** 10000 as "10,000" (by hand: the page's first use of `Intl` is a long task). */
export const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** A few of `paths`, and how many more: "a.txt, b.txt, c.txt and 9,997 more". */
export function someOf(paths: readonly string[], shown = 3): string {
  const listed = paths.slice(0, shown).join(", ");
  const more = paths.length - shown;
  return more > 0 ? `${listed} and ${grouped(more)} more` : listed;
}

/**
 * What the person reads when files were not kept for the limits: which (a few by name, and how
 * many), why, and that nothing kept before was lost. `what`: "saved" (Python wrote them) or
 * "uploaded".
 */
export function limitNotice(refused: readonly { file: SizedFile; reason: Refusal }[], what: "saved" | "uploaded"): string {
  if (!refused.length) return "";
  const paths = refused.map(({ file }) => file.path);
  const count = paths.length === 1 ? "1 file" : `${grouped(paths.length)} files`;
  const reasons = new Set(refused.map(({ reason }) => reason));
  const limit = [
    ...(reasons.has("files") ? [`${grouped(MAX_FILES)} files`] : []),
    ...(reasons.has("bytes") ? [`${formatBytes(MAX_TOTAL_BYTES)} in all`] : []),
  ].join(" and ");
  const where = what === "saved" ? " They stay in Python's folder until Python restarts." : "";
  return (
    `${count} not ${what} (${someOf(paths)}): each conversation, and the Playground, keeps at most ${limit}. ` +
    `The files kept before are all still there.${where} Delete files you no longer need to make room.`
  );
}
