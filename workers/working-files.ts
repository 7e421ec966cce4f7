/**
 * The person's files in the interpreter's working directory, as the page lists, reads, writes
 * and deletes them (uploads, downloads, the Files panel, a widget's files).
 */
import type { PyodideAPI } from "pyodide";
import type { FileBytes, FileData, FileInfo } from "./python-api";
import { bytesOf } from "./page-fetch";
import { safeRelativePath, WORKING_DIRECTORY } from "./file-paths";

type FileSystem = PyodideAPI["FS"];

/** A file name from outside as an absolute path: relative ones in the working directory. */
function resolve(path: string): string {
  const safe = safeRelativePath(path);
  if (!safe) throw new Error(`Not a usable file name: ${JSON.stringify(path)}`);
  return path.startsWith("/") ? `/${safe}` : `${WORKING_DIRECTORY}/${safe}`;
}

/**
 * Every file under the working directory, but hidden ones, compiled modules and links: a link
 * is not followed (one that leads nowhere or round in a loop would fail the whole listing, and
 * one to a system folder would have it saved as the person's files).
 */
export function listWorkingFiles(fs: FileSystem): FileInfo[] {
  const files: FileInfo[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const name of fs.readdir(dir) as string[]) {
      // Hidden files and folders (caches, settings) and compiled modules are not the person's files.
      if (name.startsWith(".") || name === "__pycache__") continue;
      const full = `${dir}/${name}`;
      const stat = fs.lstat(full) as { mode: number; size: number; mtime: Date | number };
      if (fs.isLink(stat.mode)) continue;
      if (fs.isDir(stat.mode)) walk(full, `${prefix}${name}/`);
      else if (fs.isFile(stat.mode)) {
        files.push({ path: prefix + name, size: stat.size, mtimeMs: new Date(stat.mtime).getTime() });
      }
    }
  };
  walk(WORKING_DIRECTORY, "");
  return files;
}

export function readWorkingFile(fs: FileSystem, path: string): Uint8Array {
  return fs.readFile(resolve(path)) as Uint8Array;
}

/** Each of `paths` that is a file, with its bytes; the others are left out. */
export function readWorkingFiles(fs: FileSystem, paths: string[]): FileBytes[] {
  const files: FileBytes[] = [];
  for (const path of paths) {
    const full = resolve(path);
    const found = fs.analyzePath(full);
    if (found.exists && fs.isFile((fs.lstat(full) as { mode: number }).mode)) files.push({ path, data: fs.readFile(full) as Uint8Array });
  }
  return files;
}

/**
 * Many files written at once (their Blobs read together, off the page's thread). Every file that
 * can be written is; the others are named in the one error thrown at the end.
 */
export async function writeWorkingFiles(fs: FileSystem, files: FileData[]): Promise<void> {
  const bytes = await Promise.all(files.map((file) => bytesOf(file.data)));
  const failed: string[] = [];
  const folders = new Set<string>();
  files.forEach((file, i) => {
    try {
      const full = resolve(file.path);
      const folder = full.slice(0, full.lastIndexOf("/"));
      if (!folders.has(folder)) fs.mkdirTree(folder);
      folders.add(folder);
      fs.writeFile(full, new Uint8Array(bytes[i]), { canOwn: true });
    } catch {
      failed.push(file.path);
    }
  });
  if (failed.length) throw new Error(`Could not write ${failed.length} of ${files.length} files into Python's folder: ${failed.slice(0, 5).join(", ")}.`);
}

export async function writeWorkingFile(fs: FileSystem, path: string, data: string | Uint8Array | Blob | ArrayBuffer, append: boolean): Promise<void> {
  const full = resolve(path);
  fs.mkdirTree(full.slice(0, full.lastIndexOf("/")));
  if (data instanceof Blob || data instanceof ArrayBuffer) {
    // A Blob is read here, off the page's thread; the file system keeps these bytes without copying them.
    const bytes = new Uint8Array(await bytesOf(data));
    if (!append) {
      fs.writeFile(full, bytes, { canOwn: true });
      return;
    }
    data = bytes;
  }
  if (!append) {
    fs.writeFile(full, data);
    return;
  }
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const stream = fs.open(full, "a");
  try {
    fs.write(stream, bytes, 0, bytes.length);
  } finally {
    fs.close(stream);
  }
}

export function deleteWorkingFile(fs: FileSystem, path: string): void {
  const full = resolve(path);
  if (fs.analyzePath(full).exists) fs.unlink(full);
}

export function deleteWorkingFiles(fs: FileSystem, paths: string[]): void {
  for (const path of paths) deleteWorkingFile(fs, path);
}
