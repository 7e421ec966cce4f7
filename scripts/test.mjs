#!/usr/bin/env node
// `npm test`: type-check, lint, unit tests, build, browser tests; then one closing line
// "N passed, N failed, N skipped" counting every unit and browser test.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";

const results = "test-reports";
rmSync(`${results}/unit.json`, { force: true });
rmSync(`${results}/e2e.json`, { force: true });
mkdirSync(results, { recursive: true });

/** Type-checks and lint, run side by side (each uses one core); their output is printed in order. */
const checks = [
  ["Type-check", "npx", ["tsc", "--noEmit"]],
  ["Type-check the service worker", "npx", ["tsc", "--noEmit", "-p", "src/sw"]],
  ["Lint", "npx", ["eslint", "--max-warnings", "0", "."]],
];
const steps = [
  ["Unit tests", "npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile=${results}/unit.json`]],
  ["Build", "npx", ["vite", "build", "--mode", "test", "--logLevel", "warn"]],
  ["Browser tests", "npx", ["playwright", "test"]],
];

function runCaptured(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    const output = [];
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.on("error", (error) => resolve({ status: 1, output: Buffer.from(String(error)) }));
    child.on("close", (status) => resolve({ status, output: Buffer.concat(output) }));
  });
}

let failedStep = "";
const checked = await Promise.all(checks.map(([, command, args]) => runCaptured(command, args)));
checks.forEach(([name], i) => {
  console.log(`\n▶ ${name}`);
  process.stdout.write(checked[i].output);
  if (checked[i].status !== 0 && !failedStep) failedStep = name;
});
for (const [name, command, args] of failedStep ? [] : steps) {
  console.log(`\n▶ ${name}`);
  const { status } = spawnSync(command, args, { stdio: "inherit", env: process.env });
  if (status !== 0) {
    failedStep = name;
    // Keep going after test failures so every count is reported; stop on the rest.
    if (name !== "Unit tests" && name !== "Browser tests") break;
  }
}

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(`${results}/unit.json`)) {
  const unit = JSON.parse(readFileSync(`${results}/unit.json`, "utf8"));
  passed += unit.numPassedTests;
  failed += unit.numFailedTests;
  skipped += unit.numPendingTests + unit.numTodoTests;
}
if (existsSync(`${results}/e2e.json`)) {
  const e2e = JSON.parse(readFileSync(`${results}/e2e.json`, "utf8"));
  passed += e2e.stats.expected;
  failed += e2e.stats.unexpected + e2e.stats.flaky;
  skipped += e2e.stats.skipped;
}
if (failedStep && failed === 0) {
  console.log(`\n${failedStep} failed.`);
  failed = 1;
}
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed || failedStep ? 1 : 0);
