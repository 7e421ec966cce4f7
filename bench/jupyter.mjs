// The round trip of `1+1` in a Playground cell, in the browser and on a local Jupyter server
// (Debian's `jupyter server`, started here), in the same page and the same run.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { median, onNewDocument, openPage, percentile, playgroundReady, recordPage, sleep } from "./lib.mjs";
import { runInUi } from "./ui.mjs";

const RUNS = 20;

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function startServer(origin) {
  const root = mkdtempSync(path.join(tmpdir(), "kiln-bench-jupyter-"));
  const token = randomBytes(16).toString("hex");
  const port = await freePort();
  const args = ["-m", "jupyter_server", `--ServerApp.token=${token}`, `--ServerApp.allow_origin=${origin}`, `--ServerApp.root_dir=${root}`, `--port=${port}`, "--ServerApp.ip=127.0.0.1", "--no-browser"];
  if (process.getuid?.() === 0) args.push("--allow-root");
  const child = spawn("/usr/bin/python3", args, { stdio: "ignore", env: { ...process.env, JUPYTER_RUNTIME_DIR: path.join(root, ".runtime") } });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) break;
    const ok = await fetch(`${url}/api/status`, { headers: { Authorization: `token ${token}` } }).then((r) => r.ok, () => false);
    if (ok) return { url, token, stop: () => (child.kill("SIGTERM"), rmSync(root, { recursive: true, force: true })) };
    await sleep(250);
  }
  child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
  throw new Error("jupyter server did not start (is Debian's jupyter-server installed?)");
}

const summary = (xs) => ({ p50: median(xs), p95: percentile(xs, 95), runs: xs.length });

/** `1+1` round trips in the Playground: in the browser, then with the notebook's kernel on the Jupyter server (its first run, which starts the kernel, not counted). */
export async function jupyterRoundTrip(browser, origin) {
  const server = await startServer(origin);
  const { page, context } = await openPage(browser);
  await onNewDocument(page, recordPage);
  try {
    await page.goto(`${origin}/harness.html`);
    await page.evaluate(async ({ url, token }) => {
      const settings = await window.kiln.loadSettings();
      await window.kiln.saveSettings({ ...settings, jupyter: { url, token, rememberToken: true } });
    }, { url: server.url, token: server.token });
    await page.goto(`${origin}/#/playground`);
    await playgroundReady(page);
    const measure = async () => {
      const times = [];
      await runInUi(page, "1+1");
      for (let i = 0; i < RUNS; i++) {
        const { start, end } = await runInUi(page, "1+1");
        times.push(end - start);
      }
      return times;
    };
    const browserTimes = await measure();
    await page.getByLabel("Kernel").selectOption("jupyter");
    const jupyterTimes = await measure();
    const text = await page.getByRole("region", { name: "Cell 1" }).getByRole("region", { name: "Output" }).innerText();
    if (!text.includes("Ran on the Jupyter server") || !text.includes("2")) throw new Error(`the last run did not run on the Jupyter server: ${text.slice(0, 200)}`);
    return { browser: summary(browserTimes), jupyter: summary(jupyterTimes) };
  } finally {
    await context.close();
    server.stop();
  }
}
