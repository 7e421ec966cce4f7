/**
 * A fake Anthropic Messages API for browser tests (node:http only), so no test reaches the real API.
 *
 * It runs shell commands for its code execution tool, so it answers only its own test run:
 * - It listens on 127.0.0.1 on a port the OS picks (`options.port`, default 0) and makes a secret token per
 *   start (`options.token`, default 16 random bytes in hex). Every route below lives under `/<token>/`:
 *   `startFakeAnthropic()` resolves to `{url, token, close}` with `url` = `http://127.0.0.1:<port>/<token>`,
 *   which is the SDK's `baseURL` (the app's Base URL setting) as is, and the control routes are `${url}/__kiln/…`.
 * - A request whose path does not start with `/<token>/` (no token, a wrong one, an OPTIONS preflight without
 *   it) gets a 404 `not_found_error` (with the CORS headers, so that a browser can read it): nothing runs and
 *   nothing is recorded. The token is compared in constant time.
 * - The browser tests reach it through `KILN_FAKE_ANTHROPIC_URL`, set by e2e/support/global-setup.ts.
 *
 * Below, paths are given without the `/<token>` prefix.
 *
 * The app's `@anthropic-ai/sdk` client takes that `url` as its `baseURL`. The server answers like the real API:
 * - `POST /v1/messages`: the next scripted reply, as SSE (`stream: true`) or as one message JSON.
 *   Scripted `thinking` blocks stream as `thinking_delta` pieces and a `signature_delta`, as with extended
 *   thinking; a thinking block sent back without its signature is refused.
 *   Requests are validated first (model, max_tokens, alternating roles, tool_use/tool_result pairing, tool shapes, the
 *   `container` and every `container_upload` file id): a 400 `invalid_request_error` otherwise.
 * - `GET /v1/models` and `GET /v1/models/{id}`.
 * - Files API: `POST /v1/files` (multipart field `file`, at most 500 MB, else 413), `GET /v1/files`,
 *   `GET /v1/files/{id}`, `GET /v1/files/{id}/content` (only files that code execution created are downloadable:
 *   others get a 400 with `error.details.error_code: "file_not_downloadable"`), `DELETE /v1/files/{id}`.
 *   Unknown ids get a 404 `not_found_error`. Files belong to the API key that uploaded or created them.
 * - Auth: the key comes from `x-api-key` or, as SDK 1.x sends it, `Authorization: Bearer <key>`. A missing key
 *   or the key `bad-key` gets a 401 `authentication_error`.
 * - Every response has a `request-id`, CORS headers and `cross-origin-resource-policy: cross-origin` (the app
 *   page is cross-origin isolated); an OPTIONS preflight on any path answers 204 and allows whatever headers
 *   the browser asks for (`content-type` of a multipart upload, `anthropic-beta`, `x-stainless-*`, …); without
 *   the token it is a 404 like any other request.
 *
 * Server-side code execution. A reply `{execute: ExecOptions}` answers a request whose `tools` hold a code
 * execution tool (`type` `code_execution_<version>`, name `code_execution`). The "model" runs the first fenced
 * block of the last user message: a ```bash block for versions 20250825 and later, a ```python block for the
 * legacy 20250522 (no tool or no block: 400, and the reply stays queued). The answer streams, as the real API
 * does: `message_start`, `ping`; a `server_tool_use` block (`srvtoolu_…`; `bash_code_execution` with input
 * `{command}`, legacy `code_execution` with `{code}`) whose start carries `input: {}` and whose input follows
 * in `input_json_delta` pieces; the whole result block in one `content_block_start`
 * (`bash_code_execution_tool_result` / legacy `code_execution_tool_result`, `tool_use_id` = that id) and its
 * `content_block_stop`; a text block; `message_delta` with `stop_reason` and `container: {id, expires_at,
 * skills: null}`; `message_stop`. Without a stream, the message JSON carries `container` at its top level.
 * - The code really runs (`bash -c`, legacy `python3 -c`) in a container: a temp folder that is the working
 *   directory and `HOME`, with `$INPUT_DIR` (= `<container>/inputs`, where `container_upload` files are
 *   copied before each run), `$OUTPUT_DIR` (= `<container>/outputs`), `TMPDIR` inside it, and a `PYTHONPATH`
 *   whose `sandbox-site/` holds stand-ins for the sandbox's preinstalled libraries (a tiny `torch`). A run over
 *   its time limit (20 s, or the reply's `timeoutMs`) is killed and answers `execution_time_exceeded`.
 * - `ExecOptions`: `command` runs instead of the fenced block (a model that changed the code); `errorCode` answers
 *   the result's `*_tool_result_error` form and runs nothing; `pauseFirst` first answers a short text with
 *   `stop_reason: "pause_turn"` (the container already made) and puts the reply, without `pauseFirst`, back at
 *   the front of the queue for the continuation; `text` is the closing text (default "Done.").
 * - Files that a run creates or changes anywhere in the container (outside `inputs/`, names not starting with
 *   `.`) become downloadable files of the key and are listed in the result's `content` as
 *   `{type: "bash_code_execution_output", file_id}` (legacy `code_execution_output`). One over 10 MB makes the
 *   result an `output_file_too_large` error (legacy: the file is left out and stderr says so).
 * - Containers: the request's `container` (an id string, or `{id}`) reuses a container of the key, files and
 *   all; none makes a new one. A container expires 30 minutes after its last use; an unknown or expired id is a
 *   400 `invalid_request_error` (`container <id> not found` / `container <id> has expired`), as is a
 *   `container_upload` of an unknown file; such refused requests leave the scripted reply queued. All temp
 *   folders are removed on `close()`. `startFakeAnthropic(options)` can shorten the limits for tests.
 *
 * Control API, keyed by API key so that parallel tests with different keys never meet:
 * - `POST /__kiln/script` `{key, replies: Reply[]}` appends replies to the key's queue; each `/v1/messages`
 *   request consumes one. An empty queue answers the text "(no scripted reply)".
 * - `GET /__kiln/requests?key=K` → `[{body, headers}]`, every `/v1/messages` request of that key, in order.
 * - `GET /__kiln/file-requests?key=K` → `[{method, path, status, headers, file?}]`, every `/v1/files…` request
 *   of that key, in order (`file`: the stored file's metadata for an upload, a metadata read or a download).
 * - `POST /__kiln/expire-container` `{id}` expires that container now (its folder is removed).
 * - `POST /__kiln/reset` `{key}` clears the key's queue, requests, files and containers.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { constants as osConstants, tmpdir } from "node:os";
import { basename, extname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { listFiles, runProcess, sandboxEnv } from "../support/sandbox-process.ts";
import { routedUrl } from "../support/token-route.ts";

export type ScriptBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; name: string; input: unknown; id?: string }
  /** Extended thinking: streamed as `thinking_delta` pieces, then its `signature_delta`. */
  | { type: "thinking"; thinking: string; signature?: string };
export type StopReason = "end_turn" | "tool_use" | "pause_turn" | "max_tokens";
/** The `error_code`s of a code execution result (`output_file_too_large` exists for the bash versions only). */
export type ExecErrorCode = "unavailable" | "too_many_requests" | "execution_time_exceeded" | "output_file_too_large" | "invalid_tool_input";
export interface ExecOptions {
  /** Run this instead of the fenced block of the last user message (a model that changed the code). */
  command?: string;
  /** Answer the error form of the result block with this code; nothing runs. */
  errorCode?: ExecErrorCode;
  /** First answer a short text with `stop_reason: "pause_turn"`; the continuation request then runs the code. */
  pauseFirst?: boolean;
  /** The text after the result (default "Done."). */
  text?: string;
  /** The run's time limit (default 20 s, or the server's `execTimeoutMs`). */
  timeoutMs?: number;
}
export type Reply =
  /** `delayMs` waits between SSE events; `errorAfterBlocks` / `dropAfterBlocks` fail after N whole blocks. */
  | { content: ScriptBlock[]; stop_reason?: StopReason; delayMs?: number; errorAfterBlocks?: number; dropAfterBlocks?: number }
  | { status: number; error: { type: string; message: string }; headers?: Record<string, string> }
  /** Server-side code execution of the code the last user message shows (see the header comment). */
  | { execute: ExecOptions; delayMs?: number };
export interface RecordedRequest {
  body: unknown;
  headers: Record<"anthropic-version" | "x-api-key" | "authorization" | "anthropic-dangerous-direct-browser-access", string | null>;
}
export interface FileMetadata {
  id: string;
  type: "file";
  filename: string;
  mime_type: string;
  size_bytes: number;
  created_at: string;
  downloadable: boolean;
}
export interface RecordedFileRequest {
  method: string;
  path: string;
  /** The response's HTTP status (0 while it is still being answered). */
  status: number;
  headers: Record<"anthropic-version" | "anthropic-beta" | "content-type", string | null>;
  file?: FileMetadata;
}
export interface FakeAnthropicOptions {
  /** The port to listen on (127.0.0.1); 0, the default, lets the OS pick a free one. */
  port?: number;
  /** The secret path prefix (at least 16 of `A-Z a-z 0-9 _ -`); default: 16 random bytes in hex. */
  token?: string;
  /** Default time limit of a code execution run, in ms (20 000). */
  execTimeoutMs?: number;
  /** A container expires this long after its last use, in ms (30 minutes). */
  containerIdleMs?: number;
  /** Largest accepted upload, in bytes (500 MB). */
  maxUploadBytes?: number;
  /** Largest file a run may create, in bytes (10 MB). */
  maxOutputFileBytes?: number;
}

const MODELS = [
  { id: "claude-sonnet-5-5", display_name: "Claude Sonnet 5.5", created_at: "2026-09-01T00:00:00Z" },
  { id: "claude-opus-5-5", display_name: "Claude Opus 5.5", created_at: "2026-09-01T00:00:00Z" },
  { id: "claude-haiku-4-5", display_name: "Claude Haiku 4.5", created_at: "2025-10-15T00:00:00Z" },
].map((model) => ({ type: "model", ...model }));

const MB = 1024 * 1024;

const MIME_TYPES: Record<string, string> = {
  ".csv": "text/csv",
  ".tsv": "text/tab-separated-values",
  ".txt": "text/plain",
  ".log": "text/plain",
  ".md": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
  ".xml": "application/xml",
  ".json": "application/json",
  ".py": "text/x-python",
  ".js": "text/javascript",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".gz": "application/gzip",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};
const mimeTypeOf = (filename: string) => MIME_TYPES[extname(filename).toLowerCase()] ?? "application/octet-stream";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const id = (prefix: string) => prefix + randomBytes(12).toString("base64url").replace(/[-_]/g, "x");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** Splits a string into about three pieces, never inside a code point. */
function chunks(text: string): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / 3));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** The real API's message for the first problem in a request body, or null when it is valid. */
function invalid(body: Json): string | null {
  if (typeof body.model !== "string" || !body.model) return "model: Field required";
  if (body.max_tokens === undefined) return "max_tokens: Field required";
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    return "max_tokens: Input should be a valid integer greater than or equal to 1";
  }
  const messages = body.messages;
  if (!Array.isArray(messages)) return "messages: Field required";
  if (!messages.length) return "messages: at least one message is required";
  for (const [n, message] of messages.entries()) {
    if (!isObject(message) || (message.role !== "user" && message.role !== "assistant")) {
      return `messages.${n}.role: Input should be 'user' or 'assistant'`;
    }
    if (typeof message.content !== "string" && !Array.isArray(message.content)) {
      return `messages.${n}.content: Input should be a valid string or list`;
    }
    if (n === 0 && message.role !== "user") return 'messages: first message must use the "user" role';
    const previous: unknown = messages[n - 1];
    if (isObject(previous) && previous.role === message.role) {
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`;
    }
    if (message.role !== "user") {
      // A thinking block goes back whole: with the signature that proves it unchanged.
      for (const [m, block] of (Array.isArray(message.content) ? message.content : []).entries()) {
        if (isObject(block) && block.type === "thinking" && (typeof block.signature !== "string" || !block.signature)) {
          return `messages.${n}.content.${m}.thinking.signature: Field required`;
        }
      }
      continue;
    }
    // tool_result blocks answer the tool_use blocks of the assistant message just before, all of them.
    const asked = isObject(previous) ? blocksOf(previous, "tool_use").map((block) => block.id) : [];
    const answered = blocksOf(message, "tool_result").map((block) => block.tool_use_id);
    const stray = answered.findIndex((toolUseId) => !asked.includes(toolUseId));
    if (stray >= 0) {
      return `messages.${n}.content.${stray}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(answered[stray])}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    const unanswered = asked.filter((toolUseId) => !answered.includes(toolUseId));
    if (unanswered.length) {
      return `messages.${n - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) return "tools: Input should be a valid list";
  for (const [n, tool] of ((body.tools as unknown[] | undefined) ?? []).entries()) {
    if (!isObject(tool)) return `tools.${n}: Input should be a valid dictionary`;
    if (typeof tool.type === "string" && tool.type !== "custom") continue; // a server tool, e.g. code_execution_20250825
    if (typeof tool.name !== "string" || !tool.name) return `tools.${n}.custom.name: Field required`;
    if (!isObject(tool.input_schema)) return `tools.${n}.custom.input_schema: Field required`;
    if (tool.input_schema.type !== "object") return `tools.${n}.custom.input_schema.type: Input should be 'object'`;
  }
  const container = body.container;
  if (container != null && typeof container !== "string" && !(isObject(container) && (container.id == null || typeof container.id === "string"))) {
    return "container: Input should be a valid string";
  }
  return null;
}

function blocksOf(message: Json, type: string): Json[] {
  return Array.isArray(message.content) ? message.content.filter((block): block is Json => isObject(block) && block.type === type) : [];
}

/** The code execution tool of a request: its version decides the blocks (legacy 20250522: Python, else bash). */
function codeExecutionTool(body: Json): { type: string; legacy: boolean } | null {
  const tool = ((body.tools as unknown[] | undefined) ?? []).find(
    (tool): tool is Json => isObject(tool) && typeof tool.type === "string" && tool.type.startsWith("code_execution_"),
  );
  return tool ? { type: tool.type as string, legacy: tool.type === "code_execution_20250522" } : null;
}

/** The code of the first ```bash (or, legacy, ```python) block in the text of the last user message. */
function fencedCode(body: Json, language: "bash" | "python"): string | null {
  const messages = (body.messages as Json[]).filter((message) => message.role === "user");
  const last = messages[messages.length - 1];
  if (!last) return null;
  const text =
    typeof last.content === "string"
      ? last.content
      : blocksOf(last, "text")
          .map((block) => String(block.text))
          .join("\n");
  // The block ends at a line that is only a fence, so code that itself mentions ``` stays whole.
  const match = new RegExp("```" + language + "[ \\t]*\\r?\\n([\\s\\S]*?)\\r?\\n```[ \\t]*(?:\\r?\\n|$)").exec(text);
  return match ? match[1] : null;
}

interface StoredFile {
  meta: FileMetadata;
  path: string;
}

interface Container {
  id: string;
  dir: string;
  expiresAt: number;
  expired: boolean;
}

interface KeyState {
  queue: Reply[];
  requests: RecordedRequest[];
  fileRequests: RecordedFileRequest[];
  files: Map<string, StoredFile>;
  containers: Map<string, Container>;
}

type RunResult =
  | { error: ExecErrorCode }
  | { stdout: string; stderr: string; return_code: number; files: StoredFile[] };

export interface FakeAnthropic {
  /** `http://127.0.0.1:<port>/<token>`: the API's base URL (no trailing slash). */
  url: string;
  /** The secret first path segment of every route. */
  token: string;
  /** Stops the server, kills running code, and removes every temp folder. */
  close: () => Promise<void>;
}

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const port = options.port ?? 0;
  const token = options.token ?? randomBytes(16).toString("hex");
  if (!/^[\w-]{16,}$/.test(token)) throw new Error("startFakeAnthropic: the token must be at least 16 of A-Z a-z 0-9 _ -");
  const tokenBytes = Buffer.from(token, "utf8");
  const execTimeoutMs = options.execTimeoutMs ?? 20_000;
  const containerIdleMs = options.containerIdleMs ?? 30 * 60_000;
  const maxUploadBytes = options.maxUploadBytes ?? 500 * MB;
  const maxOutputFileBytes = options.maxOutputFileBytes ?? 10 * MB;

  const keys = new Map<string, KeyState>();
  const stateOf = (key: string): KeyState => {
    let state = keys.get(key);
    if (!state) keys.set(key, (state = { queue: [], requests: [], fileRequests: [], files: new Map(), containers: new Map() }));
    return state;
  };
  /** Every temp folder made, so that close() removes them all. */
  const tempDirs = new Set<string>();
  let filesDir: string | null = null;
  const storeDir = async () => {
    if (!filesDir) tempDirs.add((filesDir = await mkdtemp(join(tmpdir(), "kiln-fake-files-"))));
    return filesDir;
  };
  const removeDir = async (dir: string) => {
    tempDirs.delete(dir);
    await rm(dir, { recursive: true, force: true });
  };
  const running = new Set<() => void>();

  async function newContainer(state: KeyState): Promise<Container> {
    const dir = await mkdtemp(join(tmpdir(), "kiln-container-"));
    tempDirs.add(dir);
    await Promise.all(["inputs", "outputs", ".tmp"].map((name) => mkdir(join(dir, name))));
    const container: Container = { id: id("container_011C"), dir, expiresAt: Date.now() + containerIdleMs, expired: false };
    state.containers.set(container.id, container);
    return container;
  }

  async function expire(container: Container): Promise<void> {
    container.expired = true;
    await removeDir(container.dir);
  }

  async function storeFile(state: KeyState, filename: string, mimeType: string, downloadable: boolean, from: Buffer | string) {
    const meta: FileMetadata = {
      id: id("file_011C"),
      type: "file",
      filename,
      mime_type: mimeType,
      size_bytes: 0,
      created_at: new Date().toISOString(),
      downloadable,
    };
    const path = join(await storeDir(), meta.id);
    if (typeof from === "string") await copyFile(from, path);
    else await writeFile(path, from);
    meta.size_bytes = (await stat(path)).size;
    const file = { meta, path };
    state.files.set(meta.id, file);
    return file;
  }

  /** Runs code in a container: its output, and the files it created or changed, stored as downloadable files. */
  async function run(state: KeyState, container: Container, code: string, legacy: boolean, timeoutMs: number): Promise<RunResult> {
    const before = await listFiles(container.dir, ["inputs"]);
    const env = sandboxEnv(container.dir, {
      INPUT_DIR: join(container.dir, "inputs"),
      OUTPUT_DIR: join(container.dir, "outputs"),
      TMPDIR: join(container.dir, ".tmp"),
    });
    const ran = await runProcess(legacy ? "python3" : "bash", ["-c", code], { cwd: container.dir, env, timeoutMs, running });
    if (ran.timedOut) return { error: "execution_time_exceeded" };

    let stderr = ran.stderr;
    const files: StoredFile[] = [];
    for (const [path, now] of await listFiles(container.dir, ["inputs"])) {
      const then = before.get(path);
      if (then && then.mtime === now.mtime && then.size === now.size) continue;
      if (now.size > maxOutputFileBytes) {
        if (!legacy) return { error: "output_file_too_large" };
        stderr += `${stderr && !stderr.endsWith("\n") ? "\n" : ""}${relative(container.dir, path)}: output file too large, not saved\n`;
        continue;
      }
      files.push(await storeFile(state, basename(path), mimeTypeOf(path), true, path));
    }
    return {
      stdout: ran.stdout,
      stderr,
      return_code: ran.exitCode ?? 128 + (ran.signal ? (osConstants.signals[ran.signal] ?? 1) : 1),
      files,
    };
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, "api_error", String(error));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader("request-id", id("req_011C"));
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-expose-headers", "request-id, retry-after");
    res.setHeader("cross-origin-resource-policy", "cross-origin");
    const url = routedUrl(req.url ?? "/", tokenBytes); // the path without the token, for the routes below
    if (!url) {
      // Not this test run's client: answer before reading the body, run nothing, record nothing.
      req.resume();
      res.setHeader("connection", "close");
      return sendError(res, 404, "not_found_error", "Not found: this server answers only under its test run's token (/<token>/…).");
    }
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
        "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*",
        "access-control-max-age": "600",
      });
      res.end();
      return;
    }
    const route = `${req.method} ${url.pathname.replace(/\/+$/, "")}`;
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const key = header(req, "x-api-key") ?? bearer ?? null;

    if (url.pathname === "/v1/files" || url.pathname.startsWith("/v1/files/")) {
      if (!key) {
        req.resume();
        return sendError(res, 401, "authentication_error", "invalid x-api-key");
      }
      const record: RecordedFileRequest = {
        method: req.method ?? "GET",
        path: url.pathname + url.search,
        status: 0,
        headers: { "anthropic-version": header(req, "anthropic-version"), "anthropic-beta": header(req, "anthropic-beta"), "content-type": header(req, "content-type") },
      };
      stateOf(key).fileRequests.push(record);
      res.on("finish", () => (record.status = res.statusCode));
      if (key === "bad-key") {
        req.resume();
        return sendError(res, 401, "authentication_error", "invalid x-api-key");
      }
      return handleFiles(req, res, route, url, stateOf(key), record);
    }

    const raw = req.method === "POST" ? ((await readBody(req)) ?? Buffer.alloc(0)).toString("utf8") : "";
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      return sendError(res, 400, "invalid_request_error", "The request body is not valid JSON.");
    }

    if (route === "POST /__kiln/script") {
      if (!isObject(body) || typeof body.key !== "string" || !Array.isArray(body.replies)) {
        return sendError(res, 400, "invalid_request_error", "expected {key: string, replies: Reply[]}");
      }
      stateOf(body.key).queue.push(...(body.replies as Reply[]));
      return sendJson(res, 200, { queued: stateOf(body.key).queue.length });
    }
    if (route === "POST /__kiln/reset") {
      const resetKey = isObject(body) && typeof body.key === "string" ? body.key : "";
      const state = keys.get(resetKey);
      if (state) {
        keys.delete(resetKey);
        await Promise.all([...state.containers.values()].map((container) => removeDir(container.dir)));
        await Promise.all([...state.files.values()].map((file) => rm(file.path, { force: true })));
      }
      return sendJson(res, 200, { ok: true });
    }
    if (route === "POST /__kiln/expire-container") {
      const wanted = isObject(body) ? body.id : undefined;
      const container = [...keys.values()].map((state) => state.containers.get(String(wanted))).find(Boolean);
      if (!container) return sendError(res, 404, "not_found_error", `container ${String(wanted)} not found`);
      await expire(container);
      return sendJson(res, 200, { id: container.id, expired: true });
    }
    if (route === "GET /__kiln/requests") return sendJson(res, 200, keys.get(url.searchParams.get("key") ?? "")?.requests ?? []);
    if (route === "GET /__kiln/file-requests") return sendJson(res, 200, keys.get(url.searchParams.get("key") ?? "")?.fileRequests ?? []);

    if (route === "POST /v1/messages" && key) {
      const pick = (name: keyof RecordedRequest["headers"]) => header(req, name);
      stateOf(key).requests.push({
        body,
        headers: {
          "anthropic-version": pick("anthropic-version"),
          "x-api-key": pick("x-api-key"),
          authorization: pick("authorization"),
          "anthropic-dangerous-direct-browser-access": pick("anthropic-dangerous-direct-browser-access"),
        },
      });
    }
    const api = route === "POST /v1/messages" || route === "GET /v1/models" || route.startsWith("GET /v1/models/");
    if (api && (!key || key === "bad-key")) return sendError(res, 401, "authentication_error", "invalid x-api-key");

    if (route === "GET /v1/models") {
      return sendJson(res, 200, { data: MODELS, has_more: false, first_id: MODELS[0].id, last_id: MODELS[MODELS.length - 1].id });
    }
    if (route.startsWith("GET /v1/models/")) {
      const model = MODELS.find((m) => m.id === decodeURIComponent(url.pathname.slice("/v1/models/".length)));
      return model ? sendJson(res, 200, model) : sendError(res, 404, "not_found_error", `model: ${url.pathname.slice(11)}`);
    }
    if (route !== "POST /v1/messages" || !key) return sendError(res, 404, "not_found_error", "Not found");

    if (!isObject(body)) return sendError(res, 400, "invalid_request_error", "The request body must be a JSON object.");
    const problem = invalid(body);
    if (problem) return sendError(res, 400, "invalid_request_error", problem);
    const state = stateOf(key);

    // The container and the uploads it should hold.
    const containerId = isObject(body.container) ? body.container.id : body.container;
    let container: Container | undefined;
    if (typeof containerId === "string") {
      container = state.containers.get(containerId);
      if (container && !container.expired && container.expiresAt <= Date.now()) await expire(container);
      if (!container) return sendError(res, 400, "invalid_request_error", `container ${containerId} not found`);
      if (container.expired) return sendError(res, 400, "invalid_request_error", `container ${containerId} has expired`);
    }
    const uploads: StoredFile[] = [];
    for (const [n, message] of (body.messages as Json[]).entries()) {
      if (message.role !== "user" || !Array.isArray(message.content)) continue;
      for (const [m, block] of (message.content as unknown[]).entries()) {
        if (!isObject(block) || block.type !== "container_upload") continue;
        const file = state.files.get(String(block.file_id));
        if (!file) return sendError(res, 400, "invalid_request_error", `messages.${n}.content.${m}.file_id: file ${String(block.file_id)} not found`);
        uploads.push(file);
      }
    }

    const next = state.queue[0];
    if (next && "execute" in next) {
      const tool = codeExecutionTool(body);
      if (!tool) {
        return sendError(res, 400, "invalid_request_error", "tools: a code execution tool (type code_execution_<version>, name code_execution) is required to execute code");
      }
      const language = tool.legacy ? "python" : "bash";
      const code = next.execute.command ?? fencedCode(body, language);
      if (code === null) {
        return sendError(res, 400, "invalid_request_error", `messages: the last user message has no \`\`\`${language} block to execute (tool ${tool.type})`);
      }
      state.queue.shift();
      container ??= await newContainer(state);
      container.expiresAt = Date.now() + containerIdleMs;
      const info = { id: container.id, expires_at: new Date(container.expiresAt).toISOString(), skills: null };
      if (next.execute.pauseFirst) {
        state.queue.unshift({ ...next, execute: { ...next.execute, pauseFirst: false } });
        const text = { type: "text", text: tool.legacy ? "I'll run this Python code." : "I'll run this command." };
        return sendMessage(req, res, body, [text], { stopReason: "pause_turn", delayMs: next.delayMs, container: info });
      }
      for (const file of uploads) await copyFile(file.path, join(container.dir, "inputs", file.meta.filename));

      const toolUseId = id("srvtoolu_01");
      const toolUse = {
        type: "server_tool_use",
        id: toolUseId,
        name: tool.legacy ? "code_execution" : "bash_code_execution",
        input: tool.legacy ? { code } : { command: code },
        caller: { type: "direct" },
      };
      const prefix = tool.legacy ? "code_execution" : "bash_code_execution";
      let result: Json;
      const outcome: RunResult = next.execute.errorCode
        ? { error: next.execute.errorCode }
        : await run(state, container, code, tool.legacy, next.execute.timeoutMs ?? execTimeoutMs);
      if ("error" in outcome) {
        result = { type: `${prefix}_tool_result_error`, error_code: outcome.error };
      } else {
        result = {
          type: `${prefix}_result`,
          stdout: outcome.stdout,
          stderr: outcome.stderr,
          return_code: outcome.return_code,
          content: outcome.files.map((file) => ({ type: `${prefix}_output`, file_id: file.meta.id })),
        };
      }
      container.expiresAt = Date.now() + containerIdleMs;
      info.expires_at = new Date(container.expiresAt).toISOString();
      const blocks = [toolUse, { type: `${prefix}_tool_result`, tool_use_id: toolUseId, content: result }, { type: "text", text: next.execute.text ?? "Done." }];
      return sendMessage(req, res, body, blocks, { stopReason: "end_turn", delayMs: next.delayMs, container: info });
    }

    const reply: Reply = state.queue.shift() ?? { content: [{ type: "text", text: "(no scripted reply)" }] };
    if ("status" in reply) return sendJson(res, reply.status, { type: "error", error: reply.error }, reply.headers);
    if (!("content" in reply)) return sendError(res, 500, "api_error", "execute reply out of turn"); // answered above
    const content = reply.content.map((block): Json =>
      block.type === "tool_use"
        ? { type: "tool_use", id: block.id ?? id("toolu_01"), name: block.name, input: block.input ?? {} }
        : block.type === "thinking"
          ? { type: "thinking", thinking: block.thinking, signature: block.signature ?? `sig_${randomBytes(12).toString("base64url")}` }
          : block,
    );
    const stopReason = reply.stop_reason ?? (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn");
    await sendMessage(req, res, body, content, { ...reply, stopReason });
  }

  /** The Files API routes, for one key. */
  async function handleFiles(req: IncomingMessage, res: ServerResponse, route: string, url: URL, state: KeyState, record: RecordedFileRequest) {
    if (route === "POST /v1/files") {
      const declared = Number(req.headers["content-length"]);
      const tooLarge = () => {
        res.setHeader("connection", "close");
        sendError(res, 413, "request_too_large", `File too large: the Files API accepts files up to ${Math.round(maxUploadBytes / MB)} MB.`);
      };
      if (declared > maxUploadBytes) {
        req.resume();
        return tooLarge();
      }
      const raw = await readBody(req, maxUploadBytes + 64 * 1024);
      if (!raw) return tooLarge();
      const parts = parseMultipart(raw, header(req, "content-type") ?? "");
      if (!parts) return sendError(res, 400, "invalid_request_error", "The request body must be multipart/form-data with a boundary.");
      const part = parts.get("file");
      if (!part) return sendError(res, 400, "invalid_request_error", "file: Field required");
      if (part.data.length > maxUploadBytes) return tooLarge();
      let filename = basename((part.filename ?? "").replace(/\\/g, "/"));
      const partType = part.contentType && part.contentType !== "application/octet-stream" ? part.contentType : null;
      if (!filename) {
        const ext = Object.entries(MIME_TYPES).find(([, type]) => type === partType)?.[0] ?? "";
        filename = `unnamed${ext}`;
      }
      const file = await storeFile(state, filename, partType ?? mimeTypeOf(filename), false, part.data);
      record.file = file.meta;
      return sendJson(res, 200, file.meta);
    }
    if (route === "GET /v1/files") {
      const all = [...state.files.values()].map((file) => file.meta).reverse(); // newest first
      const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get("limit")) || 20));
      const start = Number(/^page_(\d+)$/.exec(url.searchParams.get("page") ?? "")?.[1] ?? 0);
      const data = all.slice(start, start + limit);
      const hasMore = start + limit < all.length;
      return sendJson(res, 200, {
        data,
        has_more: hasMore,
        first_id: data[0]?.id ?? null,
        last_id: data[data.length - 1]?.id ?? null,
        next_page: hasMore ? `page_${start + limit}` : null,
      });
    }
    const match = /^\/v1\/files\/([^/]+)(\/content)?\/?$/.exec(url.pathname);
    const fileId = match ? decodeURIComponent(match[1]) : "";
    const file = state.files.get(fileId);
    const known = match && (req.method === "GET" || (req.method === "DELETE" && !match[2]));
    if (!known) return sendError(res, 404, "not_found_error", "Not found");
    if (!file) return sendError(res, 404, "not_found_error", `File not found: ${fileId}`);
    record.file = file.meta;
    if (req.method === "DELETE") {
      state.files.delete(fileId);
      await rm(file.path, { force: true });
      return sendJson(res, 200, { id: fileId, type: "file_deleted" });
    }
    if (!match[2]) return sendJson(res, 200, file.meta);
    if (!file.meta.downloadable) {
      return sendJson(res, 400, {
        type: "error",
        error: {
          type: "invalid_request_error",
          message: `File ${fileId} is not downloadable. Only files created by a tool, such as the code execution tool, can be downloaded.`,
          details: { error_code: "file_not_downloadable" },
        },
      });
    }
    res.writeHead(200, {
      "content-type": file.meta.mime_type,
      "content-length": String(file.meta.size_bytes),
      "content-disposition": `attachment; filename="${file.meta.filename.replace(/["\\\r\n]/g, "_")}"`,
    });
    await new Promise<void>((resolve, reject) => {
      createReadStream(file.path).on("error", reject).pipe(res).on("finish", resolve).on("error", reject);
    });
  }

  const url = await new Promise<string>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${token}`));
  });
  const close = async () => {
    for (const kill of running) kill();
    await new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    });
    await Promise.all([...tempDirs].map(removeDir));
  };
  return { url, token, close };
}

interface SendOptions {
  stopReason: StopReason;
  delayMs?: number;
  errorAfterBlocks?: number;
  dropAfterBlocks?: number;
  container?: { id: string; expires_at: string; skills: null };
}

/**
 * Answers one message: SSE when the request asked for a stream, else JSON. Text streams in `text_delta` pieces,
 * the input of `tool_use` and `server_tool_use` in `input_json_delta` pieces; any other block (a server tool's
 * result) arrives whole in its `content_block_start`.
 */
async function sendMessage(req: IncomingMessage, res: ServerResponse, body: Json, content: Json[], options: SendOptions) {
  const { stopReason, delayMs, errorAfterBlocks, dropAfterBlocks, container } = options;
  const outputTokens = tokens(JSON.stringify(content));
  const usage = { input_tokens: tokens(JSON.stringify(body)), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" };
  const message = { id: id("msg_01"), type: "message", role: "assistant", model: body.model, content, stop_reason: stopReason, stop_sequence: null };
  const failAfter = errorAfterBlocks ?? dropAfterBlocks;

  if (body.stream !== true) {
    if (dropAfterBlocks !== undefined) return void req.socket.destroy();
    if (errorAfterBlocks !== undefined) return sendError(res, 529, "overloaded_error", "Overloaded");
    return sendJson(res, 200, { ...message, ...(container ? { container } : {}), usage: { ...usage, output_tokens: outputTokens } });
  }

  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  let closed = false;
  res.on("close", () => (closed = true));
  const send = async (type: string, data: Json) => {
    if (closed) return;
    await new Promise((resolve) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`, resolve));
    if (delayMs) await sleep(delayMs);
  };

  await send("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  await send("ping", {});
  for (const [index, block] of content.entries()) {
    if (index === failAfter) break;
    if (block.type === "text") {
      await send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of chunks(String(block.text))) await send("content_block_delta", { index, delta: { type: "text_delta", text } });
    } else if (block.type === "thinking") {
      await send("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
      for (const thinking of chunks(String(block.thinking))) await send("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
      await send("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "tool_use" || block.type === "server_tool_use") {
      await send("content_block_start", { index, content_block: { ...block, input: {} } });
      for (const json of ["", ...chunks(JSON.stringify(block.input))]) {
        await send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json } });
      }
    } else {
      await send("content_block_start", { index, content_block: block });
    }
    await send("content_block_stop", { index });
  }
  if (dropAfterBlocks !== undefined) return void req.socket.destroy();
  if (errorAfterBlocks !== undefined) {
    await send("error", { error: { type: "overloaded_error", message: "Overloaded" } });
    return void res.end();
  }
  const delta = { stop_reason: stopReason, stop_sequence: null, ...(container ? { container } : {}) };
  await send("message_delta", { delta, usage: { output_tokens: outputTokens } });
  await send("message_stop", {});
  res.end();
}

interface FormPart {
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The parts of a multipart/form-data body, by field name (binary-safe), or null when it is not one. */
function parseMultipart(body: Buffer, contentType: string): Map<string, FormPart> | null {
  const match = /^multipart\/form-data\s*;.*?boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) return null;
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  const parts = new Map<string, FormPart>();
  let at = body.indexOf(delimiter);
  if (at < 0) return null;
  for (;;) {
    at += delimiter.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts; // "--": the end
    if (body[at] === 0x0d && body[at + 1] === 0x0a) at += 2;
    const headersEnd = body.indexOf("\r\n\r\n", at);
    if (headersEnd < 0) return null;
    const headers = body.subarray(at, headersEnd).toString("utf8");
    const end = body.indexOf(next, headersEnd + 4);
    if (end < 0) return null;
    const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? "";
    const name = /\bname="((?:[^"\\]|\\.)*)"/i.exec(disposition)?.[1];
    const encoded = /\bfilename\*=(?:UTF-8)?''([^;\s]+)/i.exec(disposition)?.[1];
    const plain = /\bfilename="((?:[^"\\]|\\.)*)"/i.exec(disposition)?.[1];
    const filename = encoded !== undefined ? decodeURIComponent(encoded) : plain?.replace(/\\(.)/g, "$1").replace(/%(22|0A|0D)/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const partType = /^content-type:\s*([^;\r\n]+)/im.exec(headers)?.[1]?.trim().toLowerCase();
    if (name !== undefined && !parts.has(name)) parts.set(name, { filename, contentType: partType, data: body.subarray(headersEnd + 4, end) });
    at = end + 2;
  }
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** The whole body; with a limit, null once it is exceeded (the rest is read and dropped). */
function readBody(req: IncomingMessage, limit = Infinity): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (part: Buffer) => {
      size += part.length;
      if (size <= limit) parts.push(part);
      else parts.length = 0;
    });
    req.on("end", () => resolve(size <= limit ? Buffer.concat(parts) : null));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "application/json" });
  res.end(JSON.stringify(data));
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: "error", error: { type, message } });
}

// Run directly (under any TypeScript loader): serve on a free port, or PORT; the printed URL holds the token.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startFakeAnthropic({ port: Number(process.env.PORT) || 0 }).then(({ url }) => console.log(`Fake Anthropic API on ${url} (the Base URL, token included)`));
}
