import { spawnSync } from "node:child_process";

/*
 * Jupyter's own `nbformat` (Python), for tests: it validates what Kiln writes and writes what
 * Kiln reads. Required: the tests fail, not skip, when no Python has it (Debian's
 * python3-nbformat; NBFORMAT_PYTHON names another interpreter).
 */

const CANDIDATES = [process.env.NBFORMAT_PYTHON, "python3", "/usr/bin/python3"].filter((path): path is string => !!path);

let found: string | undefined;

/** The first Python that imports nbformat. */
function python(): string {
  if (found) return found;
  for (const candidate of CANDIDATES) {
    const result = spawnSync(candidate, ["-c", "import nbformat"], { encoding: "utf8" });
    if (result.status === 0) return (found = candidate);
  }
  throw new Error(`No Python with nbformat (tried ${CANDIDATES.join(", ")}): install python3-nbformat, or set NBFORMAT_PYTHON.`);
}

/** Runs `script` in that Python with `input` on stdin: its stdout, or an error with its stderr. */
export function runNbformat(script: string, input = ""): string {
  const result = spawnSync(python(), ["-c", script], { input, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`nbformat failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

/**
 * Validates a notebook's text with `nbformat.validate`; throws nbformat's message when it is not
 * valid. Warnings are errors: nbformat otherwise adds missing cell ids itself, with a warning.
 */
export function validateWithNbformat(text: string): void {
  runNbformat("import warnings\nwarnings.simplefilter('error')\nimport nbformat, sys\nnbformat.validate(nbformat.reads(sys.stdin.read(), as_version=4))", text);
}
