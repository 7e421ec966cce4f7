import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { errorFromStderr } from "../../execution/traceback";
import { describeToolError, readExecution, sandboxProgram } from "./sandbox";

const BASH = "code_execution_20260521";
const LEGACY = "code_execution_20250522";

describe("sandboxProgram and the runner, executed here as the sandbox would", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (code: string, cell: number, files: { path: string; sha256: string }[] = [], tool = BASH) => {
    const program = sandboxProgram(code, cell, files.map((f) => ({ ...f, fileId: "file_x" })), tool);
    const [command, args] = tool === LEGACY ? ["python3", ["-c", program.expected]] : ["bash", ["-c", program.expected]];
    const out = spawnSync(command, args, { cwd: dir, encoding: "utf8", env: { ...process.env, INPUT_DIR: path.join(dir, "in") } });
    return { stdout: out.stdout, stderr: out.stderr, status: out.status };
  };

  it("runs the cell exactly, shows the last value, and keeps variables, functions and classes between runs", () => {
    dir = mkdtempSync(path.join(tmpdir(), "kiln-sandbox-"));
    const tricky = "s = 'KILN_CELL $HOME `x` \\\\n'\nclass P:\n    def __init__(self): self.v = 3\ndef f(a):\n    return a + 1\np = P()\nprint(len(s))\nf(41)";
    const first = run(tricky, 1);
    expect(first).toMatchObject({ status: 0, stdout: "22\n42\n" });
    expect(readFileSync(path.join(dir, ".kiln/cell_1.py"), "utf8")).toBe(tricky + "\n");
    const second = run("print(s, f(1), p.v)", 2);
    expect(second).toMatchObject({ status: 0, stdout: "KILN_CELL $HOME `x` \\n 2 3\n" });
  });

  it("reports errors like Python and sys.exit codes as they are", () => {
    dir = mkdtempSync(path.join(tmpdir(), "kiln-sandbox-"));
    const failed = run("x = 1\n1/0", 1);
    expect(failed.status).toBe(1);
    expect(errorFromStderr(failed.stderr, 1)).toMatchObject({ ename: "ZeroDivisionError", evalue: "division by zero" });
    expect(failed.stderr).not.toContain("run.py");
    expect(run("print(x)", 2).stdout).toBe("1\n");
    const exited = run("import sys\nsys.exit(3)", 3);
    expect(exited.status).toBe(3);
    expect(errorFromStderr(exited.stderr, 3)).toMatchObject({ ename: "SystemExit", evalue: "3" });
  });

  it("brings the person's uploaded files into the working directory by content", () => {
    dir = mkdtempSync(path.join(tmpdir(), "kiln-sandbox-"));
    mkdirSync(path.join(dir, "in"));
    writeFileSync(path.join(dir, "in", "my data.csv"), "a,b\n1,2\n");
    const sha256 = createHash("sha256").update("a,b\n1,2\n").digest("hex");
    const result = run("print(open('my data.csv').read().split()[1])", 1, [{ path: "my data.csv", sha256 }]);
    expect(result).toMatchObject({ status: 0, stdout: "1,2\n" });
  });

  it("works with the legacy Python-only tool too", () => {
    dir = mkdtempSync(path.join(tmpdir(), "kiln-sandbox-"));
    expect(run("y = 'legacy'\ny", 1, [], LEGACY)).toMatchObject({ status: 0, stdout: "'legacy'\n" });
    expect(run("print(y.upper())", 2, [], LEGACY)).toMatchObject({ status: 0, stdout: "LEGACY\n" });
  });

  it("asks for a fenced block holding exactly the expected input", () => {
    const program = sandboxProgram("print(1)", 4, [], BASH);
    expect(program.prompt).toContain("```bash\n" + program.expected + "\n```");
    expect(program.expected).toContain("cat > .kiln/cell_4.py <<'KILN_CELL'\nprint(1)\nKILN_CELL\n");
    expect(execFileSync("bash", ["-n", "-c", program.expected]).toString()).toBe("");
  });
});

const use = (id: string, name: string, input: unknown) => ({ type: "server_tool_use", id, name, input });

describe("readExecution", () => {
  const expected = "python3 .kiln/run.py .kiln/cell_1.py";

  it("reads a bash result: output, exit code and created files", () => {
    const out = readExecution(
      [
        use("s1", "bash_code_execution", { command: expected }),
        {
          type: "bash_code_execution_tool_result",
          tool_use_id: "s1",
          content: {
            type: "bash_code_execution_result",
            stdout: "hi\n",
            stderr: "warn\n",
            return_code: 0,
            content: [{ type: "bash_code_execution_output", file_id: "file_1" }],
          },
        },
        { type: "text", text: "Done." },
      ],
      expected,
    );
    expect(out).toEqual({ stdout: "hi\n", stderr: "warn\n", returnCode: 0, fileIds: ["file_1"], ran: true });
  });

  it("reads the legacy code_execution result", () => {
    const out = readExecution(
      [
        use("s1", "code_execution", { code: "print(2)" }),
        {
          type: "code_execution_tool_result",
          tool_use_id: "s1",
          content: { type: "code_execution_result", stdout: "2\n", stderr: "", return_code: 0, content: [{ type: "code_execution_output", file_id: "f" }] },
        },
      ],
      "print(2)",
    );
    expect(out).toMatchObject({ stdout: "2\n", returnCode: 0, fileIds: ["f"], ran: true });
    expect(out.changed).toBeUndefined();
  });

  it("turns every *_error form into a clear message and status", () => {
    for (const [type, errorType] of [
      ["bash_code_execution_tool_result", "bash_code_execution_tool_result_error"],
      ["code_execution_tool_result", "code_execution_tool_result_error"],
      ["text_editor_code_execution_tool_result", "text_editor_code_execution_tool_result_error"],
    ]) {
      const out = readExecution(
        [use("s1", "x", {}), { type, tool_use_id: "s1", content: { type: errorType, error_code: "too_many_requests" } }],
        expected,
      );
      expect(out.toolError).toEqual(describeToolError("too_many_requests"));
      expect(out.ran).toBe(false);
    }
    expect(describeToolError("unavailable")).toMatchObject({ status: "unavailable", message: expect.stringMatching(/unavailable right now/) });
    expect(describeToolError("execution_time_exceeded")).toMatchObject({ status: "timeout" });
    expect(describeToolError("output_file_too_large").message).toMatch(/too large/);
    expect(describeToolError("invalid_tool_input").message).toMatch(/rejected the command/);
    expect(describeToolError("file_not_found", "no such file: a.csv").message).toContain("no such file: a.csv");
  });

  it("says what ran when the model changed the command or used the text editor", () => {
    const changed = readExecution(
      [
        use("s1", "text_editor_code_execution", { command: "create", path: "x.py", file_text: "print(3)" }),
        { type: "text_editor_code_execution_tool_result", tool_use_id: "s1", content: { type: "text_editor_code_execution_create_result", is_file_update: false } },
        use("s2", "bash_code_execution", { command: "python3 x.py" }),
        {
          type: "bash_code_execution_tool_result",
          tool_use_id: "s2",
          content: { type: "bash_code_execution_result", stdout: "3\n", stderr: "", return_code: 0, content: [] },
        },
      ],
      expected,
    );
    expect(changed).toMatchObject({ stdout: "3\n", ran: true, changed: "create x.py\n\npython3 x.py" });
  });
});
