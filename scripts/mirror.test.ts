import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildPackageFixtures, servePackages } from "../e2e/support/package-fixtures.ts";
import { mirror, normalizeName, parseArgs } from "./mirror.mjs";

const SCRIPT = fileURLToPath(new URL("./mirror.mjs", import.meta.url));

let root: string;
let fixtures: string;
let server: Server;
let source: string;
let out: string;
let lines: string[];
const log = (line: string) => lines.push(line);

const listen = (s: Server) => new Promise<string>((resolve) => s.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}/`)));
const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));
const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const readLock = () => JSON.parse(readFileSync(path.join(out, "pyodide-lock.json"), "utf8"));

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "kiln-mirror-"));
  fixtures = path.join(root, "cdn");
  buildPackageFixtures(fixtures);
  // Give one package an import name that differs from its package name.
  const lockPath = path.join(fixtures, "pyodide-lock.json");
  const lock = JSON.parse(readFileSync(lockPath, "utf8"));
  lock.packages.kilntinydep.imports = ["tiny_dep_module"];
  writeFileSync(lockPath, JSON.stringify(lock));
  server = await servePackages(fixtures, 0);
  source = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await close(server);
  rmSync(root, { recursive: true, force: true });
});

let run = 0;
beforeEach(() => {
  out = path.join(root, `out-${++run}`);
  lines = [];
});

describe("mirror", () => {
  it("copies a package and its dependencies with a lock file listing exactly those", async () => {
    const result = await mirror({ names: ["kilntiny"], from: source, out, log });

    expect(result.packages.sort()).toEqual(["kilntiny", "kilntinydep"]);
    expect(result.files).toBe(2);
    expect(readdirSync(out).sort()).toEqual([
      "kilntiny-1.0.0-py3-none-any.whl",
      "kilntinydep-1.0.0-py3-none-any.whl",
      "pyodide-lock.json",
    ]);
    const original = JSON.parse(readFileSync(path.join(fixtures, "pyodide-lock.json"), "utf8"));
    const lock = readLock();
    expect(lock.info).toEqual(original.info);
    expect(Object.keys(lock.packages).sort()).toEqual(["kilntiny", "kilntinydep"]);
    expect(lock.packages.kilntiny).toEqual(original.packages.kilntiny);
    for (const entry of Object.values(lock.packages) as { file_name: string; sha256: string }[]) {
      expect(sha(path.join(out, entry.file_name))).toBe(entry.sha256);
    }
    expect(result.bytes).toBe(readdirSync(out).filter((f) => f.endsWith(".whl")).reduce((n, f) => n + readFileSync(path.join(out, f)).length, 0));
    const text = lines.join("\n");
    expect(text).toMatch(/\[2\/2\]/);
    expect(text).toMatch(/Done: 2 packages \(2 files, /);
    expect(text).toContain("Package download URL");
    expect(text).toContain("Lock file URL");
  });

  it("accepts import names, any case, and - or _ alike", async () => {
    const result = await mirror({ names: ["TINY-DEP-MODULE"], from: source, out, log });
    expect(result.packages).toEqual(["kilntinydep"]);
    expect(Object.keys(readLock().packages)).toEqual(["kilntinydep"]);
    expect(normalizeName("Ruamel_Yaml.clib")).toBe(normalizeName("ruamel-yaml-clib"));
  });

  it("fails on a checksum mismatch, naming the package, and keeps no file for it", async () => {
    await expect(mirror({ names: ["badhash"], from: source, out, log })).rejects.toThrow(
      /Checksum mismatch for badhash .*sha256 f{64}.*Nothing was kept/,
    );
    expect(readdirSync(out)).toEqual([]);
  });

  it("fails on an unknown name, listing close matches, before downloading anything", async () => {
    const failure = mirror({ names: ["kilntinyy", "kilntiny", "nmupy"], from: source, out, log });
    await expect(failure).rejects.toThrow(/Unknown package "kilntinyy".*Close matches: kilntiny, kilntinydep\./);
    await expect(failure).rejects.toThrow(/\nUnknown package "nmupy".*Close matches: numpy[,.]/);
    await expect(mirror({ names: ["zzzqqq"], from: source, out, log })).rejects.toThrow(/"zzzqqq".*Nothing close/);
    expect(readdirSync(root)).not.toContain(path.basename(out));
  });

  it("fails clearly when the source cannot be reached", async () => {
    const closed = createServer();
    const url = await listen(closed);
    await close(closed);
    await expect(mirror({ names: ["kilntiny"], from: url, out, log })).rejects.toThrow(
      new RegExp(`Could not download the lock file from ${url}pyodide-lock.json: ECONNREFUSED`),
    );
  });

  it("fails clearly when a download breaks off or is missing, leaving no lock file", async () => {
    const dropping = createServer((req, res) => {
      if (req.url?.endsWith(".json")) res.end(readFileSync(path.join(fixtures, "pyodide-lock.json")));
      else req.socket.destroy();
    });
    const url = await listen(dropping);
    try {
      await expect(mirror({ names: ["kilntiny"], from: url, out, log })).rejects.toThrow(
        /Could not download kilntiny(dep)? from http:\/\/127\.0\.0\.1:\d+\/kilntiny(dep)?-1\.0\.0-py3-none-any\.whl: /,
      );
      expect(readdirSync(out)).toEqual([]);
    } finally {
      await close(dropping);
    }
    await expect(mirror({ names: ["ghostpkg"], from: source, out, log })).rejects.toThrow(
      /Could not download ghostpkg from .*ghostpkg-1\.0\.0-py3-none-any\.whl: HTTP 404/,
    );
  });

  it("gives up on a download that stalls", async () => {
    const stalling = createServer((req, res) => {
      if (req.url?.endsWith(".json")) res.end(readFileSync(path.join(fixtures, "pyodide-lock.json")));
      else res.writeHead(200).write("PK"); // then nothing more
    });
    const url = await listen(stalling);
    try {
      await expect(mirror({ names: ["kilntinydep"], from: url, out, log, stallMs: 200 })).rejects.toThrow(
        /Could not download kilntinydep from .*: nothing received for 0\.2 s/,
      );
      expect(readdirSync(out)).toEqual([]);
    } finally {
      stalling.closeAllConnections();
      await close(stalling);
    }
  });

  it("adds to an earlier mirror in the same folder and skips files already there", async () => {
    await mirror({ names: ["kilntinydep"], from: source, out, log });
    lines = [];
    const result = await mirror({ names: ["kilntiny"], from: source, out, log });
    expect(result.downloaded).toBe(1);
    expect(lines.join("\n")).toMatch(/kilntinydep 1\.0\.0: already present/);
    expect(Object.keys(readLock().packages)).toEqual(["kilntiny", "kilntinydep"]);
  });

  it("reads names and options from the command line", () => {
    expect(parseArgs(["numpy", "--from", "http://x/", "--out=dir", "yaml"])).toEqual({
      names: ["numpy", "yaml"],
      from: "http://x/",
      out: "dir",
      help: false,
    });
    expect(() => parseArgs(["--out"])).toThrow(/--out needs a value/);
    expect(() => parseArgs(["--force"])).toThrow(/Unknown option --force/);
  });
});

describe("npm run mirror", () => {
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [SCRIPT, ...args], (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });

  it("mirrors from a lock file URL and prints a summary", async () => {
    const result = await cli(["kilntiny", "--from", `${source}pyodide-lock.json`, "--out", out]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Done: 2 packages");
    expect(Object.keys(readLock().packages).sort()).toEqual(["kilntiny", "kilntinydep"]);
  });

  it("exits non-zero with the reason", async () => {
    const unknown = await cli(["nosuchthing", "--from", source, "--out", out]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^mirror: Unknown package "nosuchthing"/);
    const none = await cli([]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("Usage: npm run mirror");
  });
});
