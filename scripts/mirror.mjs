#!/usr/bin/env node
// `npm run mirror -- <package>... [--from <url>] [--out <dir>]`: copy packages from Pyodide's
// lock file, with everything they depend on, into a folder that can be served as a package
// mirror for Kiln (Settings → "Package download URL" and "Lock file URL").
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LOCK_FILE = "pyodide-lock.json";
/** Downloads running at once. */
const PARALLEL = 4;
/** A download that receives nothing for this long has failed. */
const STALL_MS = 60_000;

/** An error whose message is meant for the person running the command, as is. */
export class MirrorError extends Error {
  name = "MirrorError";
}

/** The Pyodide version Kiln pins: the installed npm package, else `PYODIDE_VERSION` in the settings. */
export function pinnedPyodideVersion(root = ROOT) {
  try {
    return JSON.parse(readFileSync(path.join(root, "node_modules/pyodide/package.json"), "utf8")).version;
  } catch {
    const settings = readFileSync(path.join(root, "src/versions.ts"), "utf8");
    const match = /PYODIDE_VERSION\s*=\s*"([^"]+)"/.exec(settings);
    if (!match) throw new MirrorError("Cannot tell which Pyodide version Kiln uses: run `npm install` first.");
    return match[1];
  }
}

/** @param {string} version */
export const defaultSource = (version) => `https://cdn.jsdelivr.net/pyodide/v${version}/full/`;

/** Package names compare like pip's: case-insensitive, runs of `-`, `_`, `.` are equal. */
export const normalizeName = (/** @type {string} */ name) => name.trim().toLowerCase().replace(/[-_.]+/g, "-");

/**
 * @typedef {{ name: string, version: string, file_name: string, sha256: string,
 *   imports?: string[], depends?: string[], package_type?: string }} LockPackage
 * @typedef {{ info: Record<string, unknown>, packages: Record<string, LockPackage> }} Lock
 * @typedef {{ names: string[], from?: string, out?: string, log?: (line: string) => void,
 *   fetch?: typeof globalThis.fetch, version?: string, stallMs?: number }} MirrorOptions
 * @typedef {{ packages: string[], files: number, downloaded: number, bytes: number,
 *   out: string, lockFile: string }} MirrorResult
 */

/**
 * Copy the named packages and their dependency closure into `out`, with a lock file listing
 * exactly what the folder holds. Every file is checked against the lock file's sha256 before it
 * takes its final name. Throws a {@link MirrorError} with a readable message on a bad name, a
 * network failure or a checksum mismatch.
 * @param {MirrorOptions} options
 * @returns {Promise<MirrorResult>}
 */
export async function mirror(options) {
  const { names, from, out = "pyodide-mirror", log = console.log, version } = options;
  const net = { fetch: options.fetch ?? globalThis.fetch, stallMs: options.stallMs ?? STALL_MS };
  if (!names.length) throw new MirrorError("Name at least one package to mirror.");
  const pinned = version ?? pinnedPyodideVersion();
  const { base, lockUrl } = sourceUrls(from ?? defaultSource(pinned));
  const outDir = path.resolve(out);

  log(`Reading ${lockUrl}`);
  const lock = await fetchLock(net, lockUrl);
  const index = indexLock(lock);
  const wanted = resolveNames(index, names, pinned);
  const closure = dependencyClosure(index, wanted);

  mkdirSync(outDir, { recursive: true });
  const existing = readExistingLock(outDir, lock);
  const jobs = closure.map((key) => {
    const entry = lock.packages[key];
    const url = new URL(entry.file_name, base).href;
    const fileName = path.posix.basename(new URL(url).pathname);
    if (!fileName || fileName !== path.basename(fileName)) {
      throw new MirrorError(`The lock file gives ${entry.name} an unusable file name: ${entry.file_name}`);
    }
    return { key, entry, url, fileName };
  });
  const taken = new Map();
  for (const job of jobs) {
    const other = taken.get(job.fileName);
    if (other) throw new MirrorError(`${other} and ${job.entry.name} share one file name: ${job.fileName}`);
    taken.set(job.fileName, job.entry.name);
  }

  log(`Mirroring ${jobs.length} package${jobs.length === 1 ? "" : "s"} for Pyodide ${pinned} into ${outDir}`);
  let done = 0;
  let bytes = 0;
  let downloaded = 0;
  const aborter = new AbortController();
  const queue = [...jobs];
  const worker = async () => {
    for (let job = queue.shift(); job && !aborter.signal.aborted; job = queue.shift()) {
      const target = path.join(outDir, job.fileName);
      const present = existsSync(target) ? readFileSync(target) : null;
      if (present && sha256(present) === job.entry.sha256) {
        bytes += present.length;
        log(`[${++done}/${jobs.length}] ${job.entry.name} ${job.entry.version}: already present (${formatBytes(present.length)})`);
        continue;
      }
      const body = await download(net, job.url, job.entry.name, aborter.signal);
      const actual = sha256(body);
      if (actual !== job.entry.sha256) {
        throw new MirrorError(
          `Checksum mismatch for ${job.entry.name} (${job.url}): the lock file says sha256 ${job.entry.sha256}, ` +
            `the download has ${actual}. Nothing was kept for it.`,
        );
      }
      writeAtomically(target, body);
      bytes += body.length;
      downloaded++;
      log(`[${++done}/${jobs.length}] ${job.entry.name} ${job.entry.version}: ${job.fileName} (${formatBytes(body.length)})`);
    }
  };
  /** @type {unknown[]} */
  const failures = [];
  const workers = Array.from({ length: Math.min(PARALLEL, jobs.length) }, () =>
    worker().catch((error) => {
      // The first failure is the one to report; the others only stopped because of it.
      failures.push(error);
      aborter.abort();
    }),
  );
  await Promise.all(workers);
  if (failures.length) throw failures[0];

  // The lock file: the source's `info` and only what this folder holds (earlier runs included).
  const packages = { ...existing };
  for (const job of jobs) packages[job.key] = { ...job.entry, file_name: job.fileName };
  const trimmed = { ...lock, packages: Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b))) };
  const lockFile = path.join(outDir, LOCK_FILE);
  writeAtomically(lockFile, Buffer.from(JSON.stringify(trimmed, null, 2) + "\n"));

  const kept = Object.keys(existing).filter((key) => !closure.includes(key));
  log("");
  log(
    `Done: ${jobs.length} package${jobs.length === 1 ? "" : "s"} (${jobs.length} file${jobs.length === 1 ? "" : "s"}, ` +
      `${formatBytes(bytes)}; ${downloaded} downloaded) in ${outDir}` +
      (kept.length ? `; the lock file also keeps ${kept.length} package${kept.length === 1 ? "" : "s"} from earlier runs` : ""),
  );
  log(`Serve that folder over HTTP with the headers Access-Control-Allow-Origin: * and`);
  log(`Cross-Origin-Resource-Policy: cross-origin, then in Kiln's Settings set:`);
  log(`  Package download URL  <the folder's URL>/`);
  log(`  Lock file URL         <the folder's URL>/${LOCK_FILE}`);
  log(`and press Restart.`);
  return { packages: jobs.map((job) => job.entry.name), files: jobs.length, downloaded, bytes, out: outDir, lockFile };
}

/** `--from` names a folder (the lock file is `pyodide-lock.json` in it) or a lock file. */
function sourceUrls(/** @type {string} */ from) {
  let url;
  try {
    url = new URL(from);
  } catch {
    throw new MirrorError(`--from must be an http(s) URL, such as ${defaultSource("<version>")}; got "${from}".`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new MirrorError(`--from must be an http(s) URL; got "${from}".`);
  }
  if (url.pathname.endsWith(".json")) return { base: new URL(".", url).href, lockUrl: url.href };
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  return { base: url.href, lockUrl: new URL(LOCK_FILE, url).href };
}

/**
 * @param {Net} net
 * @param {string} url
 * @returns {Promise<Lock>}
 */
async function fetchLock(net, url) {
  const body = await download(net, url, "the lock file");
  let lock;
  try {
    lock = JSON.parse(body.toString("utf8"));
  } catch {
    throw new MirrorError(`${url} is not a lock file (not JSON).`);
  }
  if (!lock || typeof lock !== "object" || !lock.packages || typeof lock.packages !== "object" || !lock.info) {
    throw new MirrorError(`${url} is not a Pyodide lock file (no "info" and "packages").`);
  }
  checkInfo(lock, url);
  return lock;
}

/** The source must serve the packages built for the Pyodide that Kiln loads. */
function checkInfo(/** @type {Lock} */ lock, /** @type {string} */ url) {
  let pinnedInfo;
  try {
    pinnedInfo = JSON.parse(readFileSync(path.join(ROOT, "node_modules/pyodide", LOCK_FILE), "utf8")).info;
  } catch {
    return; // Not installed: nothing to compare with.
  }
  for (const key of ["abi_version", "python", "platform"]) {
    if (pinnedInfo?.[key] !== undefined && lock.info[key] !== pinnedInfo[key]) {
      throw new MirrorError(
        `${url} is for a different Pyodide (${key} ${JSON.stringify(lock.info[key])}; ` +
          `Kiln's is ${JSON.stringify(pinnedInfo[key])}). Mirror from a source for the same version.`,
      );
    }
  }
}

/**
 * Normalized package names and import names → lock file keys.
 * @param {Lock} lock
 */
function indexLock(lock) {
  /** @type {Map<string, string>} */
  const byName = new Map();
  /** @type {Map<string, Set<string>>} */
  const byImport = new Map();
  /** Normalized name → as the lock file spells it (for suggestions). */
  const spelling = new Map();
  for (const [key, entry] of Object.entries(lock.packages)) {
    byName.set(normalizeName(key), key);
    if (entry.name) byName.set(normalizeName(entry.name), key);
    spelling.set(normalizeName(key), entry.name || key);
  }
  for (const [key, entry] of Object.entries(lock.packages)) {
    for (const name of entry.imports ?? []) {
      const normal = normalizeName(name);
      if (!spelling.has(normal)) spelling.set(normal, name);
      if (!byImport.has(normal)) byImport.set(normal, new Set());
      byImport.get(normal)?.add(key);
    }
  }
  return { lock, byName, byImport, spelling };
}

/**
 * Lock file keys for package or import names; one error lists every name that is not found.
 * @param {ReturnType<typeof indexLock>} index
 * @param {string[]} names
 * @param {string} version
 */
function resolveNames(index, names, version) {
  /** @type {string[]} */
  const keys = [];
  /** @type {string[]} */
  const problems = [];
  for (const name of names) {
    const normal = normalizeName(name);
    const key = index.byName.get(normal);
    const providers = key ? [key] : [...(index.byImport.get(normal) ?? [])];
    if (providers.length === 1) keys.push(providers[0]);
    else if (providers.length > 1) {
      problems.push(`"${name}" is imported from several packages (${providers.join(", ")}): name one of them.`);
    } else {
      const close = closeMatches(normal, [...index.byName.keys(), ...index.byImport.keys()]).map(
        (match) => index.spelling.get(match) ?? match,
      );
      problems.push(
        `Unknown package "${name}": Pyodide ${version}'s lock file has no package or import by that name.` +
          (close.length ? ` Close matches: ${close.join(", ")}.` : " Nothing close to it either."),
      );
    }
  }
  if (problems.length) throw new MirrorError(problems.join("\n"));
  return keys;
}

/** Up to five known names that look like `name` (edit distance, or one containing the other). */
function closeMatches(/** @type {string} */ name, /** @type {string[]} */ known) {
  const limit = Math.max(2, Math.floor(name.length / 3));
  const scored = [];
  for (const candidate of new Set(known)) {
    const distance = editDistance(name, candidate);
    const contains = Math.min(name.length, candidate.length) >= 4 && (candidate.includes(name) || name.includes(candidate));
    if (distance <= limit || contains) scored.push({ candidate, score: contains ? Math.min(distance, limit) : distance });
  }
  scored.sort((a, b) => a.score - b.score || a.candidate.length - b.candidate.length || a.candidate.localeCompare(b.candidate));
  return scored.slice(0, 5).map((match) => match.candidate);
}

/** Edits (insert, delete, substitute, swap two neighbours) turning `a` into `b`. */
function editDistance(/** @type {string} */ a, /** @type {string} */ b) {
  /** @type {number[][]} */
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The named packages and everything they depend on, as lock file keys, in a stable order.
 * @param {ReturnType<typeof indexLock>} index
 * @param {string[]} roots
 */
function dependencyClosure(index, roots) {
  /** @type {Set<string>} */
  const seen = new Set();
  const visit = (/** @type {string} */ key) => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const dep of index.lock.packages[key].depends ?? []) {
      const depKey = index.byName.get(normalizeName(dep));
      if (!depKey) {
        throw new MirrorError(`${index.lock.packages[key].name} depends on ${dep}, which the lock file does not list.`);
      }
      visit(depKey);
    }
  };
  roots.forEach(visit);
  return [...seen];
}

/**
 * Entries of a lock file already in `outDir` (an earlier run) whose files are still there.
 * @param {string} outDir
 * @param {Lock} source
 * @returns {Record<string, LockPackage>}
 */
function readExistingLock(outDir, source) {
  const file = path.join(outDir, LOCK_FILE);
  if (!existsSync(file)) return {};
  let previous;
  try {
    previous = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    throw new MirrorError(`${file} exists but is not a lock file: choose another --out folder or remove it.`);
  }
  if (JSON.stringify(previous?.info) !== JSON.stringify(source.info)) {
    throw new MirrorError(`${outDir} already holds a mirror for a different Pyodide: choose another --out folder.`);
  }
  /** @type {Record<string, LockPackage>} */
  const kept = {};
  for (const [key, entry] of Object.entries(previous.packages ?? {})) {
    if (entry?.file_name && existsSync(path.join(outDir, path.basename(entry.file_name)))) kept[key] = entry;
  }
  return kept;
}

/**
 * @typedef {{ fetch: typeof globalThis.fetch, stallMs: number }} Net
 * @param {Net} net
 * @param {string} url
 * @param {string} what names the download in errors
 * @param {AbortSignal} [signal] aborts it (another download failed)
 * @returns {Promise<Buffer>}
 */
async function download({ fetch, stallMs }, url, what, signal) {
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal?.addEventListener("abort", stop);
  let stalled = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const wait = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      controller.abort();
    }, stallMs);
  };
  try {
    wait();
    const response = await fetch(url, { signal: controller.signal });
    if (!response.ok) {
      throw new MirrorError(`Could not download ${what} from ${url}: HTTP ${response.status} ${response.statusText}`.trim());
    }
    /** @type {Buffer[]} */
    const chunks = [];
    const reader = response.body?.getReader();
    for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
      chunks.push(Buffer.from(read.value));
      wait();
    }
    return Buffer.concat(chunks);
  } catch (error) {
    if (error instanceof MirrorError) throw error;
    if (stalled) throw new MirrorError(`Could not download ${what} from ${url}: nothing received for ${stallMs / 1000} s.`);
    if (signal?.aborted) throw new MirrorError(`Download of ${what} stopped after another failure.`);
    throw new MirrorError(`Could not download ${what} from ${url}: ${networkReason(error)}`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
}

/** The most telling part of a fetch failure ("fetch failed" alone says little). */
function networkReason(/** @type {unknown} */ error) {
  const cause = error instanceof Error ? /** @type {{ code?: string, message?: string } | undefined} */ (error.cause) : undefined;
  if (cause?.code && cause.message) return `${cause.code} (${cause.message})`;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

const sha256 = (/** @type {Buffer} */ data) => createHash("sha256").update(data).digest("hex");

/** Write to a temporary name beside `target`, then rename: a reader never sees half a file. */
function writeAtomically(/** @type {string} */ target, /** @type {Buffer} */ data) {
  const temporary = `${target}.${process.pid}.partial`;
  try {
    writeFileSync(temporary, data);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function formatBytes(/** @type {number} */ n) {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

const USAGE = `Usage: npm run mirror -- <package>... [--from <url>] [--out <dir>]

Copies the named packages (package or import names) and everything they depend on, for the
Pyodide version Kiln uses, into a folder with a lock file listing them.

  --from <url>  where to copy from: a Pyodide package folder or its pyodide-lock.json
                (default: ${defaultSource("<version>")})
  --out <dir>   the folder to write (default: pyodide-mirror)`;

/** @param {string[]} argv */
export function parseArgs(argv) {
  /** @type {{ names: string[], from?: string, out?: string, help: boolean }} */
  const args = { names: [], help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    if (flag === "--help" || flag === "-h") args.help = true;
    else if (flag === "--from" || flag === "--out") {
      const value = inline ?? argv[++i];
      if (!value) throw new MirrorError(`${flag} needs a value.\n\n${USAGE}`);
      args[flag === "--from" ? "from" : "out"] = value;
    } else if (arg.startsWith("-")) throw new MirrorError(`Unknown option ${arg}.\n\n${USAGE}`);
    else args.names.push(arg);
  }
  return args;
}

async function main() {
  try {
    const args = parseArgs(process.argv.slice(2));
    if (args.help) {
      console.log(USAGE);
      return;
    }
    if (!args.names.length) throw new MirrorError(`Name at least one package.\n\n${USAGE}`);
    await mirror({ names: args.names, from: args.from, out: args.out });
  } catch (error) {
    console.error(`mirror: ${error instanceof MirrorError ? error.message : error instanceof Error ? error.stack : error}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
