/** What the stand-in APIs' code execution shares: running code in a folder, and seeing what it wrote. */
import { spawn } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** Stand-ins for the libraries the real sandboxes have preinstalled (a tiny `torch`). */
export const SANDBOX_SITE = fileURLToPath(new URL("../fake-anthropic/sandbox-site", import.meta.url));

/** Output kept per stream; the rest of a flood is dropped. */
const MAX_STREAM_BYTES = 1024 * 1024;

/** The environment of a sandbox run: `home` its working folder, the stand-in libraries on the path. */
export function sandboxEnv(home: string, extra: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    PYTHONPATH: SANDBOX_SITE,
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONIOENCODING: "utf-8",
    MPLBACKEND: "Agg",
    LANG: "C.UTF-8",
    ...extra,
  };
}

export interface ProcessResult {
  stdout: string;
  stderr: string;
  /** Null when a signal ended it (then `signal` says which). */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

/**
 * Runs `command` in its own process group, killed (group and all) after `timeoutMs`, or by
 * `running`'s kill functions when the server closes.
 */
export async function runProcess(
  command: string,
  args: string[],
  { cwd, env, timeoutMs, running }: { cwd: string; env: Record<string, string>; timeoutMs: number; running: Set<() => void> },
): Promise<ProcessResult> {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const collect = (into: Buffer[]) => {
    let size = 0;
    return (part: Buffer) => {
      if (size < MAX_STREAM_BYTES) into.push(part.subarray(0, MAX_STREAM_BYTES - size));
      size += part.length;
    };
  };
  child.stdout.on("data", collect(out));
  child.stderr.on("data", collect(err));
  let timedOut = false;
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, timeoutMs);
  running.add(killGroup);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.on("error", (error) => {
      err.push(Buffer.from(`${String(error)}\n`));
      resolve([127, null]);
    });
    child.on("close", (code, exitSignal) => resolve([code, exitSignal]));
  });
  clearTimeout(timer);
  running.delete(killGroup);
  return { stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), exitCode, signal, timedOut };
}

/**
 * Every regular file under `root` (names starting with "." left out, at any depth, and the
 * top-level folders in `skip`), sorted by path, with what tells a change.
 */
export async function listFiles(root: string, skip: readonly string[] = []): Promise<Map<string, { mtime: bigint; size: number }>> {
  const found = new Map<string, { mtime: bigint; size: number }>();
  const walk = async (dir: string) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".") || (dir === root && skip.includes(entry.name))) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const info = await stat(path, { bigint: true }).catch(() => undefined); // removed meanwhile
        if (info) found.set(path, { mtime: info.mtimeNs, size: Number(info.size) });
      }
    }
  };
  await walk(root);
  return new Map([...found.entries()].sort(([a], [b]) => (relative(root, a) < relative(root, b) ? -1 : 1)));
}
