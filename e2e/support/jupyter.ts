import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports";

/** A real `jupyter server` (Debian's, see .ci/run), started for one test file. */
export interface JupyterFixture {
  url: string;
  token: string;
  /** The server's root folder (its contents API serves it). */
  root: string;
  /** What the server logged, for a test to show what reached it. */
  log(): string;
  /** A GET of the server's REST API (`api/sessions`, `api/kernels`) with the token: its JSON. */
  api<T>(path: string): Promise<T>;
  /** Stop the server (`abruptly`: killed at once, as a crash or a lost network would leave it: nothing more is sent). */
  stop(options?: { abruptly?: boolean }): Promise<void>;
}

/** Start `jupyter server` on a free port, with a random token, allowing `origin`, in a temporary root; wait until it answers. */
export async function startJupyter(origin: string): Promise<JupyterFixture> {
  const root = await mkdtemp(join(tmpdir(), "kiln-jupyter-"));
  const token = randomBytes(16).toString("hex");
  const port = await freePort();
  let log = "";
  const child: ChildProcess = spawn(
    "/usr/bin/python3",
    [
      "-m",
      "jupyter_server",
      `--ServerApp.token=${token}`,
      `--ServerApp.allow_origin=${origin}`,
      `--ServerApp.root_dir=${root}`,
      `--port=${port}`,
      "--ServerApp.port_retries=0",
      "--ServerApp.ip=127.0.0.1",
      "--no-browser",
      // A hostile server would not limit its output: the caps on the page must.
      "--ServerApp.iopub_data_rate_limit=1e12",
      // CI machines run the suite as root.
      ...(process.getuid?.() === 0 ? ["--allow-root"] : []),
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, JUPYTER_RUNTIME_DIR: join(root, ".runtime") } },
  );
  child.stdout!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`jupyter server exited:\n${log}`);
    const ok = await fetch(`${url}/api/status`, { headers: { Authorization: `token ${token}` } }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`jupyter server did not answer within 60 s:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    token,
    root,
    log: () => log,
    api: async <T>(path: string) => {
      const response = await fetch(`${url}/${path}`, { headers: { Authorization: `token ${token}` } });
      if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}`);
      return (await response.json()) as T;
    },
    stop: async ({ abruptly = false } = {}) => {
      if (child.exitCode === null) {
        child.kill(abruptly ? "SIGKILL" : "SIGTERM");
        const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(killed);
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}
