import RUNNER from "./sandbox_runner.py?raw";
import type { RunStatus } from "../../../workers/python-api";
import { ProviderError } from "../../chat/provider";
import { streamMessage, type ApiBlock, type ProviderSettings, type StreamRequest } from "./client";

/** The one version whose tool takes Python (`{code}`) instead of bash commands. */
const LEGACY_TOOL = "code_execution_20250522";
/** `pause_turn` continuations one sandbox run may take. */
const MAX_CONTINUATIONS = 8;

const SYSTEM =
  "You are the code runner of Kiln, an app that runs a person's Python. Run exactly what you are given with the " +
  "code execution tool, once, unchanged, and nothing else. Do not explain, summarise or comment: when it has run, " +
  "answer with the single word Done.";

/** One of the person's files that the code uses, already uploaded with the Files API. */
export interface SandboxFile {
  /** Path relative to the working directory. */
  path: string;
  sha256: string;
  fileId: string;
}

/** What Kiln asks the sandbox to run for one cell. */
export interface SandboxProgram {
  /** The text of the request: the command or program in a fenced block. */
  prompt: string;
  /** Exactly what the model should pass to the tool (`command` for bash, `code` for legacy). */
  expected: string;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The request for one cell: the cell written to a file as is, run by Kiln's runner. */
export function sandboxProgram(code: string, cell: number, files: readonly SandboxFile[], toolType: string): SandboxProgram {
  const cellPath = `.kiln/cell_${cell}.py`;
  const args = [cellPath, ...files.map((file) => `${file.path}=${file.sha256}`)];
  if (toolType === LEGACY_TOOL) {
    const expected = [
      "import os, sys",
      'os.makedirs(".kiln", exist_ok=True)',
      `open(".kiln/run.py", "w").write(${JSON.stringify(RUNNER)})`,
      `open(${JSON.stringify(cellPath)}, "w").write(${JSON.stringify(code)})`,
      `sys.argv = ${JSON.stringify([".kiln/run.py", ...args])}`,
      'exec(compile(open(".kiln/run.py").read(), ".kiln/run.py", "exec"), {"__name__": "__main__"})',
    ].join("\n");
    return {
      expected,
      prompt: `Run this Python program with the code execution tool, exactly as written:\n\n\`\`\`python\n${expected}\n\`\`\``,
    };
  }
  let tag = "KILN_CELL";
  while (code.includes(tag)) tag += "_";
  const expected = [
    "mkdir -p .kiln && cat > .kiln/run.py <<'KILN_RUNNER'",
    RUNNER.trimEnd(),
    "KILN_RUNNER",
    `cat > ${cellPath} <<'${tag}'`,
    code.endsWith("\n") ? code.slice(0, -1) : code,
    tag,
    `python3 .kiln/run.py ${args.map(shellQuote).join(" ")}`,
  ].join("\n");
  return {
    expected,
    prompt: `Run this bash command with the bash tool, exactly as written, once:\n\n\`\`\`bash\n${expected}\n\`\`\``,
  };
}

/** A code execution error code as a sentence and a run status. */
export function describeToolError(code: string, detail?: string | null): { status: RunStatus; message: string } {
  const extra = detail ? ` (${detail})` : "";
  switch (code) {
    case "unavailable":
      return { status: "unavailable", message: `Anthropic's sandbox is unavailable right now${extra}. Try again later.` };
    case "too_many_requests":
      return { status: "error", message: `Anthropic's sandbox refused the run: too many requests${extra}. Wait a moment and try again.` };
    case "execution_time_exceeded":
      return { status: "timeout", message: `The code ran longer than Anthropic's sandbox allows${extra}, so the sandbox stopped it.` };
    case "output_file_too_large":
      return { status: "error", message: `A file the code wrote is too large for Anthropic's sandbox to return${extra}.` };
    case "invalid_tool_input":
      return { status: "error", message: `Anthropic's sandbox rejected the command it was given${extra}.` };
    case "file_not_found":
      return { status: "error", message: `Anthropic's sandbox could not find a file${extra}.` };
    default:
      return { status: "error", message: `Anthropic's sandbox reported an error: ${code}${extra}.` };
  }
}

/** What the sandbox did with one request, read from the response's blocks. */
export interface SandboxExecution {
  stdout: string;
  stderr: string;
  /** The runner's exit code, when it ran. */
  returnCode?: number;
  /** Set when a code execution tool reported an error instead of running. */
  toolError?: { status: RunStatus; message: string };
  /** Files the run created, to fetch with the Files API. */
  fileIds: string[];
  /** What ran, when it was not exactly what Kiln asked for. */
  changed?: string;
  /** Whether anything was executed at all. */
  ran: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;
const text = (value: unknown) => (typeof value === "string" ? value : "");

/**
 * Reads every code execution result shape: bash and text editor results (current tool
 * versions), the legacy `code_execution_tool_result`, and each one's `*_error` form.
 */
export function readExecution(blocks: readonly ApiBlock[], expected: string): SandboxExecution {
  const out: SandboxExecution = { stdout: "", stderr: "", fileIds: [], ran: false };
  const calls = new Map<string, { name: string; input: unknown }>();
  const ran: string[] = [];
  for (const block of blocks) {
    if (block.type === "server_tool_use") {
      calls.set(String(block.id), { name: String(block.name), input: block.input });
      continue;
    }
    if (!block.type.endsWith("_tool_result")) continue;
    const call = calls.get(String(block.tool_use_id));
    const input = isObject(call?.input) ? call.input : {};
    const content = isObject(block.content) ? block.content : {};
    const kind = text(content.type);
    if (kind.endsWith("_tool_result_error")) {
      out.toolError = describeToolError(text(content.error_code), text(content.error_message) || undefined);
      continue;
    }
    if (kind === "bash_code_execution_result" || kind === "code_execution_result") {
      out.ran = true;
      ran.push(text(input.command) || text(input.code));
      out.stdout += text(content.stdout);
      out.stderr += text(content.stderr);
      out.returnCode = typeof content.return_code === "number" ? content.return_code : out.returnCode;
      for (const file of Array.isArray(content.content) ? content.content : []) {
        if (isObject(file) && typeof file.file_id === "string") out.fileIds.push(file.file_id);
      }
    } else if (kind === "encrypted_code_execution_result") {
      out.ran = true;
      ran.push(text(input.code));
      out.returnCode = typeof content.return_code === "number" ? content.return_code : out.returnCode;
      out.stderr += "[The sandbox returned this run's output encrypted; Kiln cannot show it.]\n";
    } else if (kind.startsWith("text_editor_code_execution_")) {
      // The model edited or viewed a file instead of running the command as given.
      ran.push(`${text(input.command)} ${text(input.path)}`.trim());
    }
  }
  const clean = (value: string) => value.replace(/\s+$/, "");
  if (ran.length !== 1 || clean(ran[0]) !== clean(expected)) {
    if (ran.length) out.changed = ran.join("\n\n");
  }
  return out;
}

export interface SandboxRequest {
  settings: ProviderSettings;
  toolType: string;
  program: SandboxProgram;
  files: readonly SandboxFile[];
  /** Files already in the container (by sha256), so they are not attached again. */
  attached: ReadonlySet<string>;
  container?: string;
  signal: AbortSignal;
  onRetry?: (text: string) => void;
}

export interface SandboxReply extends SandboxExecution {
  container?: { id: string; expiresAt: string };
  /** The container asked for had expired or was unknown, so a new one was used. */
  containerReset: boolean;
}

/** Send one cell to the sandbox and read what happened, continuing `pause_turn` answers. */
export async function runInSandbox(request: SandboxRequest): Promise<SandboxReply> {
  let containerReset = false;
  let container = request.container;
  for (;;) {
    try {
      return { ...(await converse(request, container, containerReset)), containerReset };
    } catch (cause) {
      // The API refuses an expired or unknown container (400, or 404/500 in some versions).
      const expired =
        container &&
        cause instanceof ProviderError &&
        (cause.kind === "invalid" || cause.kind === "model" || cause.kind === "server") &&
        /container/i.test(cause.message);
      if (!expired) throw cause;
      container = undefined;
      containerReset = true;
    }
  }
}

async function converse(request: SandboxRequest, container: string | undefined, fresh: boolean) {
  const uploads = request.files
    .filter((file) => fresh || !container || !request.attached.has(file.sha256))
    .map((file) => ({ type: "container_upload", file_id: file.fileId }));
  const messages: StreamRequest["messages"] = [
    { role: "user", content: [...uploads, { type: "text", text: request.program.prompt }] },
  ];
  const blocks: ApiBlock[] = [];
  let used = container;
  for (let round = 0; ; round++) {
    const reply = await streamMessage(request.settings, {
      system: SYSTEM,
      messages,
      tools: [{ type: request.toolType, name: "code_execution" }],
      ...(used ? { container: used } : {}),
      signal: request.signal,
      onEvent: (event) => {
        if (event.type === "retry") request.onRetry?.(`${event.reason} Retrying in ${Math.round(event.delayMs / 1000)} s…`);
      },
    });
    blocks.push(...reply.blocks);
    if (reply.container) used = reply.container.id;
    const execution = readExecution(blocks, request.program.expected);
    if (reply.stopReason === "pause_turn" && round < MAX_CONTINUATIONS) {
      messages.push({ role: "assistant", content: reply.blocks });
      continue;
    }
    return { ...execution, ...(reply.container ? { container: reply.container } : {}) };
  }
}
