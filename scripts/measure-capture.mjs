#!/usr/bin/env node
// `node scripts/measure-capture.mjs [kiln-dir]`: how long capturing the session's state takes
// after a run of `1+1`, in Pyodide under Node, with the session holding nothing, 50 MiB of
// bytes, a 500 MiB bytearray, 10^5 small objects, or 10^5 variables. Runs Kiln's Python package from
// `workers/python/kiln` (or `kiln-dir`) the way the worker does, JavaScript conversion included.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "pyodide";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const KILN_DIR = path.resolve(process.argv[2] ?? path.join(ROOT, "workers/python/kiln"));
const SAMPLES = 7;

const STATES = {
  empty: "",
  "50 MiB bytes": "held = bytes(50 * 2**20)",
  "500 MiB bytearray": "held = bytearray(500 * 2**20)",
  "1e5 small objects": "held = {i: [i, str(i)] for i in range(10**5)}",
  "1e5 names": "globals().update({f'held_{i}': [i] for i in range(10**5)})",
};

const py = await loadPyodide();
py.FS.mkdirTree("/kiln-site/kiln");
for (const file of readdirSync(KILN_DIR)) py.FS.writeFile(`/kiln-site/kiln/${file}`, readFileSync(path.join(KILN_DIR, file)));
py.runPython("import sys; sys.path.insert(0, '/kiln-site')");
const runner = py.pyimport("kiln.runner");
runner.setup(() => undefined);

async function run(code) {
  const result = (await runner.run_cell(code)).toJs({ dict_converter: Object.fromEntries });
  if (result.status !== "ok") throw new Error(`${code}: ${JSON.stringify(result.error)}`);
}

function capture(code) {
  const started = performance.now();
  const proxy = runner.capture_state(code, "<cell>");
  const captured = proxy.toJs({ dict_converter: Object.fromEntries });
  proxy.destroy();
  const sent = Object.values(captured.values).reduce((sum, bytes) => sum + bytes.length, 0);
  return { ms: performance.now() - started, sent };
}

const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];

console.log("state                 first capture       capture after 1+1 (median of 7)");
for (const [label, code] of Object.entries(STATES)) {
  await run("for _n in [n for n in globals() if n.startswith('held')]: del globals()[_n]");
  capture("");
  await run(code || "pass");
  const first = capture(code);
  const times = [];
  let sent = 0;
  for (let i = 0; i < SAMPLES; i += 1) {
    await run("1+1");
    const after = capture("1+1");
    times.push(after.ms);
    sent = Math.max(sent, after.sent);
  }
  const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  console.log(
    `${label.padEnd(20)}  ${first.ms.toFixed(1).padStart(7)} ms ${mib(first.sent).padStart(10)}   ${median(times).toFixed(2).padStart(7)} ms, ${mib(sent)} sent`,
  );
}
