/**
 * A fake OpenAI-compatible server for browser tests (node:http only), so no test needs a real model: Chat
 * Completions as the local servers people point the app at answer it (Ollama's and llama.cpp's `/v1` API), and
 * OpenAI's own Responses API and Containers API, with a code interpreter that really runs Python (see below).
 *
 * It runs Python for its code interpreter, so it answers only its own test run:
 * - It listens on 127.0.0.1 on a port the OS picks (`options.port`, default 0) and makes a secret token per
 *   start (`options.token`, default 16 random bytes in hex). Every route below lives under `/<token>/`:
 *   `startFakeOpenAI()` resolves to `{url, token, close}` with `url` = `http://127.0.0.1:<port>/<token>`, and the
 *   control routes are `${url}/__kiln/…`.
 * - A request whose path does not start with `/<token>/` (no token, a wrong one, an OPTIONS preflight without
 *   it) gets a 404 with an OpenAI error body (and the CORS headers, so that a browser can read it): nothing is
 *   recorded and no reply is used. The token is compared in constant time.
 * - The browser tests reach it through `KILN_FAKE_OPENAI_URL`, set by e2e/support/global-setup.ts.
 *
 * Below, paths are given without the `/<token>` prefix.
 *
 * Sessions. A test addresses a "server" of its own by a session name in the path: its Base URL (the app's
 * setting, the SDK's `baseURL`) is `${url}/<session>/v1`, session = `[A-Za-z0-9_-]+` (not `__kiln`). Each session
 * has its own reply queues, recorded requests, containers and configuration, so tests running side by side never
 * meet. The key, CORS and preflight rules below hold for every `/v1` route of a session, the Responses and
 * Containers APIs included.
 * - `POST /<session>/v1/chat/completions`: every request is recorded (body and `Authorization` header), then
 *   validated as the real API does, with a 400 `{error: {message, type: "invalid_request_error", param, code}}`
 *   otherwise: `model` a non-empty string; `messages` a non-empty array of `system` / `user` / `assistant` /
 *   `tool` messages whose `content` is a string or an array of parts (`{type: "text", text}`, and for `user`
 *   also `{type: "image_url", image_url: {url}}`; an assistant with `tool_calls` may have no content); every
 *   `tool_calls` entry is `{id, type: "function", function: {name, arguments: string}}`; each `tool` message's
 *   `tool_call_id` answers a call of the assistant message it follows (only tool messages between), and every
 *   call is answered before the next message of another role; `tools` are `{type: "function", function: {name,
 *   description?, parameters}}`; `stream` a boolean; `stream_options` only with `stream: true`. A refused
 *   request leaves the queue as it was. A valid one gets the session's next scripted reply (an empty queue: the
 *   text "(no scripted reply)"):
 *   - With `stream: true`, SSE as llama.cpp and Ollama send it: `data: <chunk JSON>\n\n` events, no `event:`
 *     lines, each chunk `{id: "chatcmpl-…", object: "chat.completion.chunk", created, model, system_fingerprint,
 *     choices: [{index: 0, delta, finish_reason: null}]}`. The first delta is `{role: "assistant", content: ""}`;
 *     text follows in `{content}` deltas of a word each (the word and the whitespace before it); a tool call
 *     starts with `{tool_calls: [{index, id: "call_…", type: "function", function: {name, arguments: ""}}]}`
 *     and its arguments follow in about three `{tool_calls: [{index, function: {arguments}}]}` pieces, split
 *     inside the JSON (`index` counts the reply's tool calls from 0). Then a chunk with an empty delta and
 *     `finish_reason` (the scripted one, else "tool_calls" when there were calls, else "stop"); with
 *     `stream_options.include_usage`, a chunk with `choices: []` and `usage: {prompt_tokens, completion_tokens,
 *     total_tokens}`; then `data: [DONE]\n\n`.
 *   - Without a stream, one `chat.completion` JSON: `choices: [{index: 0, message: {role: "assistant", content,
 *     tool_calls?}, finish_reason}]` and `usage`.
 *   - `delayMs` waits between chunks; `dropAfterChunks: N` destroys the socket after N chunks (the role chunk
 *     counts), with no finish and no `[DONE]` (without a stream: at once).
 *   - A reply `{status, error, headers?}` answers that HTTP status with `{error: {message, type, param: null,
 *     code}}` (type by default "invalid_request_error" under 500, else "server_error"; code by default null).
 * - `GET /<session>/v1/models` → `{object: "list", data: [{id, object: "model", created, owned_by: "library"}]}`
 *   with the session's models (default "llama3.2" and "qwen2.5-coder:7b"); `GET /<session>/v1/models/{id}` one of
 *   them, or a 404.
 * - Keys: none is needed, as with a local server (the SDK sends `Authorization: Bearer <whatever key>`). A
 *   session configured with `requireKey` answers every `/v1` request without `Authorization: Bearer <that key>`
 *   with a 401 `{error: {message, type: "invalid_request_error", param: null, code: "invalid_api_key"}}`.
 * - CORS: by default every response carries `access-control-allow-origin: *`, `access-control-expose-headers`
 *   and `cross-origin-resource-policy: cross-origin` (the app page is cross-origin isolated), and an OPTIONS
 *   preflight answers 204 allowing the method and headers the browser asks for. A session configured with
 *   `cors: false` sends none of these headers, its preflights included (still 204), as a local server that does
 *   not allow the page's origin (Ollama without OLLAMA_ORIGINS): the browser refuses the preflight, so the POST
 *   itself is never sent, and the page sees a network error.
 *
 * Responses API: `POST /<session>/v1/responses`. Every request is recorded (body and `Authorization` header) in
 * a list of its own, apart from the chat completions requests, then validated as the real API does (a 400
 * `{error: {message, type: "invalid_request_error", param, code}}` in its words, unless said otherwise); a
 * refused request leaves the queue as it was:
 * - `model` a string; `input` a string or an array of items: messages `{type?: "message", role: "user" |
 *   "assistant" | "system" | "developer", content: string | parts}` (parts `input_text`, `input_image` with an
 *   http(s) `image_url` or a base64 data URL of a PNG, JPEG, GIF or WebP image (or a `file_id`), `input_file`;
 *   for `assistant`, `output_text` and `refusal`), `{type: "function_call", call_id, name, arguments: string}`,
 *   `{type: "function_call_output", call_id, output: string | input parts}`, `{type: "reasoning", id, summary,
 *   encrypted_content?}`, `{type: "code_interpreter_call", id, container_id, code, outputs, status}` (sent back
 *   as a response gave it). A `function_call_output` must answer a `function_call` before it ("No tool call
 *   found for function call output with call_id …") and every `function_call` must be answered ("No tool output
 *   found for function call …"), param `input`.
 * - Reasoning items: one with `encrypted_content` must carry one this server issued (else 400 "The encrypted
 *   content … could not be verified.", code `invalid_encrypted_content`); one without it is looked up by id, as
 *   the real API looks up stored items: with `store: false` that is a 404 "Item with id '…' not found. Items are
 *   not persisted when `store` is set to false. …"; with `store` on, only ids of reasoning items this session
 *   answered with `store` on are found (else 404 "Item with id '…' not found.").
 * - `tools`: `{type: "function", name, description?, parameters, strict?}` and `{type: "code_interpreter",
 *   container: "<container id>" | {type: "auto", memory_limit?}}`; other tool types are refused. As in the real
 *   API, function tools are strict unless `strict: false`: with `strict: true` the parameters must be a strict
 *   schema (every object `additionalProperties: false` and every property in `required`, else 400 "Invalid
 *   schema for function '…': In context=(…), …", code `invalid_function_parameters`); with `strict` left out the
 *   response repeats the schema made strict. A container id must be one of the session's containers (else 400
 *   "Container with id '…' not found.") and still running (else 400 "Container is expired.", as the real API
 *   says), whatever the reply.
 * - `include` values from the real list, `stream`/`store`/`parallel_tool_calls` booleans, `stream_options` only
 *   with `stream: true`, `reasoning.summary` "auto" | "concise" | "detailed", `max_output_tokens` at least 16.
 * - Nothing is stored, so `previous_response_id` is a 400 "Previous response with id '…' not found." and
 *   `conversation` is refused too: send the whole input, as with `store: false`.
 *
 * A valid request gets the session's next Responses reply (its own queue; empty: a message "(no scripted
 * reply)"), one of `ResponsesReply`:
 * - `{output: [...], delayMs?, dropAfterEvents?}`: output items in order, `{type: "message", text}` (a message
 *   with one `output_text` part, `annotations: []`), `{type: "function_call", name, arguments, call_id?}`
 *   (`arguments` sent as is, even invalid JSON; `call_id` by default a fresh `call_…`), `{type: "reasoning",
 *   summary?}` (its summary is sent only when the request sets `reasoning.summary`; with `include:
 *   ["reasoning.encrypted_content"]` the item carries an opaque `encrypted_content` this server accepts back).
 * - `{status, error: {message, type?, code?}, headers?}`: that HTTP status with an OpenAI error body, as for chat
 *   completions.
 * - `{execute: {code?, text?, timeoutMs?}, delayMs?, dropAfterEvents?}`: the code interpreter, below.
 * With `stream: true` the answer is SSE as the Responses API streams it: `event: <type>` and `data: <JSON with
 * type and sequence_number (0, 1, …)>` per event, no `[DONE]`. `response.created` and `response.in_progress`
 * (the response with `status: "in_progress"`, `output: []`, `usage: null`); per output item
 * `response.output_item.added` (the item `in_progress`, empty) … `response.output_item.done` (the whole item,
 * `completed`), with `output_index`; between them, for a message `response.content_part.added`,
 * `response.output_text.delta` (a word each), `response.output_text.annotation.added` (one per annotation),
 * `response.output_text.done`, `response.content_part.done`; for a function call
 * `response.function_call_arguments.delta` (about three pieces, split inside the JSON) and `.done`; for a
 * reasoning summary `response.reasoning_summary_part.added`, `response.reasoning_summary_text.delta` and
 * `.done`, `response.reasoning_summary_part.done`; for a code interpreter call
 * `response.code_interpreter_call.in_progress`, `response.code_interpreter_call_code.delta` (pieces) and
 * `.done`, `response.code_interpreter_call.interpreting`, `response.code_interpreter_call.completed` (not sent
 * for a failed run). Delta events carry an `obfuscation` filler unless `stream_options.include_obfuscation` is
 * false. Last, `response.completed` with the whole response: `{id: "resp_…", object: "response", created_at,
 * status: "completed", completed_at, model, output: [full items], tools (as the API repeats them), usage:
 * {input_tokens, output_tokens, total_tokens, …}, …}`. Without a stream, that response as one JSON. `delayMs`
 * waits between events (without a stream, once); `dropAfterEvents: N` destroys the socket after N events, never
 * sending `response.completed` (without a stream: at once).
 *
 * Containers API, a session's own (paths under `/<session>`; unknown ids get a 404 `invalid_request_error`):
 * - `POST /v1/containers` `{name, expires_after?: {anchor: "last_active_at", minutes}, memory_limit?}` →
 *   `{id: "cntr_…", object: "container", created_at, status: "running", expires_after: {anchor:
 *   "last_active_at", minutes: 20}, last_active_at, memory_limit: "1g", name}`; `GET /v1/containers` lists them
 *   (`{object: "list", data, first_id, last_id, has_more}`, newest first; `limit`, `after`, `order`);
 *   `GET /v1/containers/{id}` (an expired one says `status: "expired"`); `DELETE /v1/containers/{id}` →
 *   `{id, object: "container.deleted", deleted: true}`.
 * - Container files: `POST /v1/containers/{id}/files` (multipart field `file`) → `{id: "cfile_…", object:
 *   "container.file", container_id, path, bytes, created_at, source: "user"}` (a file of the same name is
 *   replaced); `GET /v1/containers/{id}/files` (a list as above); `GET …/files/{file_id}`;
 *   `GET …/files/{file_id}/content` (the raw bytes); `DELETE …/files/{file_id}` → `{id, object:
 *   "container.file.deleted", deleted: true}`. On an expired container these answer 400 "Container is expired.".
 * - There is no Files API here: a `file_id` (container `file_ids`, a file added by `file_id`, auto mode's
 *   `file_ids`) is a "No such File object: …" error.
 * - Each container is a temp folder. DEVIATION: a container file's `path` is the file's real absolute path in
 *   that folder, where the real API says `/mnt/data/<name>`, so that code can open it on this host; the
 *   interpreter's working directory (and HOME) is the container folder, with TMPDIR in its `.tmp/`.
 * - A container expires after its idle time (`expires_after.minutes`, else `options.containerIdleMs`, 20
 *   minutes) since its last activity (a run, a file added or deleted): its interpreter stops and its folder is
 *   removed, files and all.
 *
 * Code interpreter. An `{execute}` reply answers a request whose tools hold a `code_interpreter` (none, or no
 * code to run, is a 400 that names the scripting mistake, and the reply stays queued). The "model" runs the first
 * ```python block of the last user message's text (or `execute.code`: a model that changed the code) in the
 * tool's container: the given one, or in auto mode the still running container of the last
 * `code_interpreter_call` item of the input, else a new container (named "auto").
 * - Each container has one long-lived host `python3` process, started at its first run: variables persist from
 *   run to run, as in a notebook, and a last bare expression's value is printed. A run's stdout and stderr, in
 *   order, are its logs (cut at 1 MB), a traceback included. A run over its time limit (`execute.timeoutMs`,
 *   else `options.execTimeoutMs`, 30 s) is killed with the interpreter (the next run starts a fresh one, its
 *   variables gone): the call gets `status: "failed"` and its logs end with a line saying so. The same holds when
 *   the interpreter dies during a run.
 * - The output: a `{id: "ci_…", type: "code_interpreter_call", status, container_id, code, outputs}` item, where
 *   `outputs` is `[{type: "logs", logs}, {type: "image", url: "data:image/png;base64,…"} for each .png file the
 *   run created]` only when `include` has "code_interpreter_call.outputs", else null; then a message with
 *   `execute.text` (default "Done.") whose `output_text` has a `container_file_citation` annotation
 *   `{type, container_id, file_id, filename, start_index, end_index}` per file the run created or changed in the
 *   container (names starting with "." left out, at any depth): the span of the file's name in the text, else an
 *   empty span at its end. Created files become container files with `source: "assistant"` (a changed one keeps
 *   its id); files the run deleted stop being container files.
 * - `close()` stops every interpreter and removes every container folder.
 *
 * Control API (no session in the path; bodies are JSON):
 * - `POST /__kiln/script` `{session, replies: Reply[]}` appends replies to the session's chat completions queue.
 * - `POST /__kiln/script-responses` `{session, replies: ResponsesReply[]}` appends replies to the session's
 *   Responses queue.
 * - `GET /__kiln/requests?session=S` → `[{body, headers: {authorization}}]`, every chat completions request of
 *   the session, in order (refused ones included); `GET /__kiln/responses-requests?session=S` the same for
 *   `POST /v1/responses`.
 * - `GET /__kiln/containers?session=S` → `ContainerSnapshot[]`: each container of the session with its status,
 *   folder, whether its interpreter runs, and its files.
 * - `POST /__kiln/expire-container` `{id}` expires that container now (whichever session it belongs to).
 * - `POST /__kiln/configure` `{session, cors?, models?, requireKey?}` changes the given settings of the session
 *   (`requireKey: null` or "" takes the key requirement away).
 * - `POST /__kiln/reset` `{session}` clears the session's queues, requests, containers and configuration.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, extname, join } from "node:path";
import type { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { listFiles, SANDBOX_SITE } from "../support/sandbox-process.ts";
import { routedUrl } from "../support/token-route.ts";

export type ScriptContent =
  | { type: "text"; text: string }
  /** `arguments` is sent as is: it may be invalid JSON on purpose. */
  | { type: "tool_call"; name: string; arguments: string; id?: string };
export type Reply =
  /** `delayMs` waits between chunks; `dropAfterChunks` destroys the socket after N chunks (no `[DONE]`). */
  | { content: ScriptContent[]; finish_reason?: string; delayMs?: number; dropAfterChunks?: number }
  | { status: number; error: { message: string; type?: string; code?: string }; headers?: Record<string, string> };
export interface RecordedRequest {
  body: unknown;
  headers: { authorization: string | null };
}
export interface SessionConfig {
  /** Send CORS headers (default true); false: none at all, as a server that does not allow the page. */
  cors?: boolean;
  /** The model ids `GET /v1/models` lists (default "llama3.2", "qwen2.5-coder:7b"). */
  models?: string[];
  /** Answer 401 unless `Authorization: Bearer <requireKey>` (default: no key needed). */
  requireKey?: string | null;
}
/** One output item of a scripted Responses API reply. */
export type ResponsesOutput =
  | { type: "message"; text: string }
  /** `arguments` is sent as is: it may be invalid JSON on purpose. `call_id` defaults to a fresh `call_…`. */
  | { type: "function_call"; name: string; arguments: string; call_id?: string }
  /** The summary is sent only when the request asks for summaries (`reasoning.summary`), as the real API does. */
  | { type: "reasoning"; summary?: string };
/** A code interpreter run: see the header comment. */
export interface ResponsesExecute {
  /** Run this instead of the first ```python block of the last user message (a model that changed the code). */
  code?: string;
  /** The text of the message after the run (default "Done."). */
  text?: string;
  /** This run's time limit in ms (default: the server's `execTimeoutMs`, 30 s). */
  timeoutMs?: number;
}
export type ResponsesReply =
  /** `delayMs` waits between SSE events; `dropAfterEvents` destroys the socket after N events (no `response.completed`). */
  | { output: ResponsesOutput[]; delayMs?: number; dropAfterEvents?: number }
  | { status: number; error: { message: string; type?: string; code?: string }; headers?: Record<string, string> }
  | { execute: ResponsesExecute; delayMs?: number; dropAfterEvents?: number };
/** A container file as the Containers API returns it; `path` is its real absolute path on this host. */
export interface ContainerFileObject {
  id: string;
  object: "container.file";
  container_id: string;
  path: string;
  bytes: number;
  created_at: number;
  source: "user" | "assistant";
}
/** What `GET /__kiln/containers` tells of one container of a session. */
export interface ContainerSnapshot {
  id: string;
  name: string;
  status: "running" | "expired";
  /** The container's temp folder (removed once it expires or is deleted). */
  dir: string;
  /** Unix seconds. */
  last_active_at: number;
  /** Whether a python3 interpreter is running for it now. */
  interpreter: boolean;
  files: ContainerFileObject[];
}
export interface FakeOpenAIOptions {
  /** The port to listen on (127.0.0.1); 0, the default, lets the OS pick a free one. */
  port?: number;
  /** The secret path prefix (at least 16 of `A-Z a-z 0-9 _ -`); default: 16 random bytes in hex. */
  token?: string;
  /** Default time limit of a code interpreter run, in ms (30 000). */
  execTimeoutMs?: number;
  /** A container made without `expires_after` expires this long after its last activity, in ms (20 minutes). */
  containerIdleMs?: number;
}
export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/<token>`; a session's Base URL is `${url}/<session>/v1`. */
  url: string;
  /** The secret first path segment of every route. */
  token: string;
  /** Stops the server, drops every connection, stops every interpreter and removes every container folder. */
  close: () => Promise<void>;
}

const DEFAULT_MODELS = ["llama3.2", "qwen2.5-coder:7b"];
/** When the models were "pulled": a fixed time, as a real server reports its files' times. */
const MODELS_CREATED = 1_735_689_600;
const SESSION = /^[A-Za-z0-9_-]+$/;
const ROLES = ["system", "user", "assistant", "tool"];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
const alphanumeric = (length: number) => Array.from({ length }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[randomInt(36)]).join("");
const callId = () => `call_${alphanumeric(8)}`;

/** Text as a tokenizer streams it: each word with the whitespace before it (trailing whitespace on its own). */
function words(text: string): string[] {
  return text.match(/\s*\S+|\s+/g) ?? [];
}

/** Splits a string into about three pieces, never inside a code point. */
function pieces(text: string): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / 3));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** How the real API names a JSON value's type in its messages. */
function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a decimal";
  if (typeof value === "boolean") return "a boolean";
  if (typeof value === "string") return "a string";
  return "an object";
}

interface Problem {
  message: string;
  param: string | null;
  code: string | null;
}
const problem = (message: string, param: string | null = null, code: string | null = null): Problem => ({ message, param, code });
const missing = (param: string) => problem(`Missing required parameter: '${param}'.`, param, "missing_required_parameter");
const wrongType = (param: string, expected: string, value: unknown) =>
  problem(`Invalid type for '${param}': expected ${expected}, but got ${typeName(value)} instead.`, param, "invalid_type");
/** `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`. */
function listed(values: string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length < 3) return quoted.join(" and ");
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted[quoted.length - 1]}`;
}
const wrongValue = (param: string, value: unknown, allowed: string[]) =>
  problem(`Invalid value: '${String(value)}'. Supported values are: ${listed(allowed)}.`, param, "invalid_value");

/** The parts of a message's content array: text parts, and image parts where the role allows them. */
function invalidParts(parts: unknown[], at: string, images: boolean): Problem | null {
  const types = images ? ["text", "image_url"] : ["text"];
  for (const [m, part] of parts.entries()) {
    const param = `${at}[${m}]`;
    if (!isObject(part)) return wrongType(param, "an object", part);
    if (part.type === undefined) return missing(`${param}.type`);
    if (!types.includes(part.type as string)) return wrongValue(`${param}.type`, part.type, types);
    if (part.type === "text") {
      if (part.text === undefined) return missing(`${param}.text`);
      if (typeof part.text !== "string") return wrongType(`${param}.text`, "a string", part.text);
    } else {
      if (part.image_url === undefined) return missing(`${param}.image_url`);
      if (!isObject(part.image_url)) return wrongType(`${param}.image_url`, "an object", part.image_url);
      if (part.image_url.url === undefined) return missing(`${param}.image_url.url`);
      if (typeof part.image_url.url !== "string") return wrongType(`${param}.image_url.url`, "a string", part.image_url.url);
    }
  }
  return null;
}

/** The first problem of a chat completions request, in the real API's words, or null when it is valid. */
function invalid(body: Json): Problem | null {
  if (typeof body.model !== "string" || !body.model) return problem("you must provide a model parameter");
  const messages = body.messages;
  if (messages === undefined) return missing("messages");
  if (!Array.isArray(messages)) return wrongType("messages", "an array", messages);
  if (!messages.length) {
    return problem("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array");
  }
  for (const [n, message] of messages.entries()) {
    const at = `messages[${n}]`;
    if (!isObject(message)) return wrongType(at, "an object", message);
    if (message.role === undefined) return missing(`${at}.role`);
    if (!ROLES.includes(message.role as string)) return wrongValue(`${at}.role`, message.role, ROLES);
    const content = message.content;
    const calls = message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls !== null;
    if (content === undefined || content === null) {
      if (!calls) return missing(`${at}.content`);
    } else if (Array.isArray(content)) {
      const partsProblem = invalidParts(content, `${at}.content`, message.role === "user");
      if (partsProblem) return partsProblem;
    } else if (typeof content !== "string") {
      return wrongType(`${at}.content`, "one of a string or array of objects", content);
    }
    if (calls) {
      if (!Array.isArray(message.tool_calls)) return wrongType(`${at}.tool_calls`, "an array", message.tool_calls);
      for (const [m, call] of message.tool_calls.entries()) {
        const param = `${at}.tool_calls[${m}]`;
        if (!isObject(call)) return wrongType(param, "an object", call);
        if (call.id === undefined) return missing(`${param}.id`);
        if (typeof call.id !== "string" || !call.id) return wrongType(`${param}.id`, "a non-empty string", call.id);
        if (call.type === undefined) return missing(`${param}.type`);
        if (call.type !== "function") return wrongValue(`${param}.type`, call.type, ["function"]);
        if (call.function === undefined) return missing(`${param}.function`);
        if (!isObject(call.function)) return wrongType(`${param}.function`, "an object", call.function);
        if (call.function.name === undefined) return missing(`${param}.function.name`);
        if (typeof call.function.name !== "string" || !call.function.name) return wrongType(`${param}.function.name`, "a non-empty string", call.function.name);
        if (call.function.arguments === undefined) return missing(`${param}.function.arguments`);
        if (typeof call.function.arguments !== "string") return wrongType(`${param}.function.arguments`, "a string", call.function.arguments);
      }
    }
    if (message.role === "tool") {
      if (message.tool_call_id === undefined) return missing(`${at}.tool_call_id`);
      if (typeof message.tool_call_id !== "string") return wrongType(`${at}.tool_call_id`, "a string", message.tool_call_id);
      // It answers the assistant message just before the run of tool messages it belongs to.
      let asker = n - 1;
      while (asker >= 0 && (messages[asker] as Json).role === "tool") asker--;
      const asked = asker >= 0 ? callIds(messages[asker] as Json) : [];
      if (!asked.length) {
        return problem("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${n}].role`);
      }
      if (!asked.includes(message.tool_call_id)) {
        return problem(`Invalid parameter: 'tool_call_id' of '${message.tool_call_id}' not found in 'tool_calls' of previous message.`, `messages.[${n}].tool_call_id`);
      }
    }
  }
  // Every call is answered by the tool messages right after its assistant message.
  for (const [n, message] of (messages as Json[]).entries()) {
    const asked = callIds(message);
    if (!asked.length) continue;
    const answered: unknown[] = [];
    for (let next = n + 1; next < messages.length && (messages[next] as Json).role === "tool"; next++) answered.push((messages[next] as Json).tool_call_id);
    const unanswered = asked.filter((id) => !answered.includes(id));
    if (unanswered.length) {
      return problem(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${unanswered.join(", ")}`,
        `messages.[${n}].role`,
      );
    }
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return wrongType("tools", "an array", body.tools);
    for (const [n, tool] of body.tools.entries()) {
      const at = `tools[${n}]`;
      if (!isObject(tool)) return wrongType(at, "an object", tool);
      if (tool.type === undefined) return missing(`${at}.type`);
      if (tool.type !== "function") return wrongValue(`${at}.type`, tool.type, ["function"]);
      if (tool.function === undefined) return missing(`${at}.function`);
      if (!isObject(tool.function)) return wrongType(`${at}.function`, "an object", tool.function);
      const { name, description, parameters } = tool.function;
      if (name === undefined) return missing(`${at}.function.name`);
      if (typeof name !== "string") return wrongType(`${at}.function.name`, "a string", name);
      if (!TOOL_NAME.test(name)) {
        return problem(`Invalid '${at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `${at}.function.name`, "invalid_value");
      }
      if (description !== undefined && typeof description !== "string") return wrongType(`${at}.function.description`, "a string", description);
      if (parameters === undefined) return missing(`${at}.function.parameters`);
      if (!isObject(parameters)) return wrongType(`${at}.function.parameters`, "an object", parameters);
    }
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") return wrongType("stream", "a boolean", body.stream);
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (body.stream !== true) return problem("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "invalid_value");
    if (!isObject(body.stream_options)) return wrongType("stream_options", "an object", body.stream_options);
  }
  return null;
}

/** The ids of an assistant message's tool calls (already checked to be strings). */
function callIds(message: Json): string[] {
  if (message.role !== "assistant" || !Array.isArray(message.tool_calls)) return [];
  return message.tool_calls.map((call) => (call as { id: string }).id);
}

// ---------------------------------------------------------------------------------------------------------------
// Responses API: request validation.

const MESSAGE_ROLES = ["user", "assistant", "system", "developer"];
const INPUT_PART_TYPES = ["input_text", "input_image", "input_file"];
const OUTPUT_PART_TYPES = ["output_text", "refusal"];
const ITEM_TYPES = ["message", "function_call", "function_call_output", "reasoning", "code_interpreter_call"];
const TOOL_TYPES = ["function", "code_interpreter"];
const INCLUDABLE = [
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
];
const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const IMAGE_DETAILS = ["low", "high", "auto", "original"];
const MEMORY_LIMITS = ["1g", "4g", "16g", "64g"];
const SUMMARY_SETTINGS = ["auto", "concise", "detailed"];

/** A refusal with its HTTP status (400 unless said otherwise). */
interface Refusal extends Problem {
  status: number;
}
const refusal = (found: Problem, status = 400): Refusal => ({ ...found, status });

/** An image URL as the real API takes it: http(s), or a base64 data URL of an image type. */
function invalidImageUrl(url: string, param: string): Problem | null {
  const example = "(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU=')";
  if (url.startsWith("data:")) {
    const data = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
    if (!data) return problem(`Invalid '${param}'. Expected a valid URL, but got a value with an invalid format.`, param, "invalid_value");
    const mediaType = data[1].toLowerCase();
    if (!IMAGE_MEDIA_TYPES.includes(mediaType)) {
      return problem(`Invalid '${param}'. Expected a base64-encoded data URL with an image MIME type ${example}, but got unsupported MIME type '${data[1]}'.`, param, "invalid_value");
    }
    if (!/;base64$/i.test(data[2]) || !/^[A-Za-z0-9+/]+={0,2}$/.test(data[3])) {
      return problem(`Invalid '${param}'. Expected a base64-encoded data URL with an image MIME type ${example}, but got a value that is not base64-encoded.`, param, "invalid_value");
    }
    return null;
  }
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    return problem(`Invalid '${param}'. Expected a valid URL, but got a value with an invalid format.`, param, "invalid_value");
  }
  return null;
}

/** The content parts of a message or of a function call's output, of the given types. */
function invalidResponseParts(parts: unknown[], at: string, types: string[]): Problem | null {
  for (const [m, part] of parts.entries()) {
    const param = `${at}[${m}]`;
    if (!isObject(part)) return wrongType(param, "an object", part);
    if (part.type === undefined) return missing(`${param}.type`);
    if (!types.includes(part.type as string)) return wrongValue(`${param}.type`, part.type, types);
    const text = (field: string) => {
      if (part[field] === undefined) return missing(`${param}.${field}`);
      return typeof part[field] === "string" ? null : wrongType(`${param}.${field}`, "a string", part[field]);
    };
    let found: Problem | null = null;
    if (part.type === "input_text" || part.type === "output_text") found = text("text");
    else if (part.type === "refusal") found = text("refusal");
    else if (part.type === "input_image") {
      const url = part.image_url;
      if ((url === undefined || url === null) && (part.file_id === undefined || part.file_id === null)) return missing(`${param}.image_url`);
      if (url !== undefined && url !== null) {
        if (typeof url !== "string") return wrongType(`${param}.image_url`, "a string", url);
        found = invalidImageUrl(url, `${param}.image_url`);
      }
      if (!found && part.detail !== undefined && part.detail !== null && !IMAGE_DETAILS.includes(part.detail as string)) {
        found = wrongValue(`${param}.detail`, part.detail, IMAGE_DETAILS);
      }
    } else if (part.type === "input_file") {
      const given = ["file_id", "file_data", "file_url"].filter((field) => typeof part[field] === "string");
      if (!given.length) return missing(`${param}.file_id`);
    }
    if (!found && part.type === "output_text" && part.annotations !== undefined && !Array.isArray(part.annotations)) {
      found = wrongType(`${param}.annotations`, "an array", part.annotations);
    }
    if (found) return found;
  }
  return null;
}

/** One input item: a message, a function call or its output, a reasoning item, a code interpreter call. */
function invalidItem(item: unknown, at: string): Problem | null {
  if (!isObject(item)) return wrongType(at, "an object", item);
  const type = item.type ?? (item.role !== undefined ? "message" : undefined);
  if (type === undefined) return missing(`${at}.role`);
  if (!ITEM_TYPES.includes(type as string)) return wrongValue(`${at}.type`, type, ITEM_TYPES);
  const string = (field: string, nonEmpty = false) => {
    if (item[field] === undefined || item[field] === null) return missing(`${at}.${field}`);
    if (typeof item[field] !== "string" || (nonEmpty && !item[field])) return wrongType(`${at}.${field}`, nonEmpty ? "a non-empty string" : "a string", item[field]);
    return null;
  };
  switch (type) {
    case "message": {
      if (item.role === undefined) return missing(`${at}.role`);
      if (!MESSAGE_ROLES.includes(item.role as string)) return wrongValue(`${at}.role`, item.role, MESSAGE_ROLES);
      const content = item.content;
      if (content === undefined || content === null) return missing(`${at}.content`);
      if (typeof content === "string") return null;
      if (!Array.isArray(content)) return wrongType(`${at}.content`, "one of a string or array of objects", content);
      return invalidResponseParts(content, `${at}.content`, item.role === "assistant" ? OUTPUT_PART_TYPES : INPUT_PART_TYPES);
    }
    case "function_call":
      return string("call_id", true) ?? string("name", true) ?? string("arguments");
    case "function_call_output": {
      const found = string("call_id", true);
      if (found) return found;
      if (item.output === undefined || item.output === null) return missing(`${at}.output`);
      if (typeof item.output === "string") return null;
      if (!Array.isArray(item.output)) return wrongType(`${at}.output`, "one of a string or array of objects", item.output);
      return invalidResponseParts(item.output, `${at}.output`, INPUT_PART_TYPES);
    }
    case "reasoning": {
      const found = string("id", true);
      if (found) return found;
      if (item.summary === undefined) return missing(`${at}.summary`);
      if (!Array.isArray(item.summary)) return wrongType(`${at}.summary`, "an array", item.summary);
      if (item.encrypted_content !== undefined && item.encrypted_content !== null && typeof item.encrypted_content !== "string") {
        return wrongType(`${at}.encrypted_content`, "a string", item.encrypted_content);
      }
      return null;
    }
    default: {
      // code_interpreter_call, sent back as the response gave it
      const found = string("id", true) ?? string("container_id", true);
      if (found) return found;
      if (item.code !== undefined && item.code !== null && typeof item.code !== "string") return wrongType(`${at}.code`, "a string", item.code);
      if (item.outputs !== undefined && item.outputs !== null && !Array.isArray(item.outputs)) return wrongType(`${at}.outputs`, "an array", item.outputs);
      return null;
    }
  }
}

/** How Python prints a tuple of path parts: `()`, `('items',)`, `('properties', 'a')`. */
function pythonTuple(path: (string | number)[]): string {
  const shown = path.map((part) => (typeof part === "number" ? String(part) : `'${part}'`));
  return shown.length === 1 ? `(${shown[0]},)` : `(${shown.join(", ")})`;
}

const isObjectSchema = (schema: Json) =>
  schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object")) || isObject(schema.properties);

/** The nested schemas of a schema, with their paths. */
function subschemas(schema: Json, path: (string | number)[]): [Json, (string | number)[]][] {
  const found: [Json, (string | number)[]][] = [];
  for (const key of ["properties", "$defs", "definitions"]) {
    const map = schema[key];
    if (isObject(map)) for (const [name, sub] of Object.entries(map)) if (isObject(sub)) found.push([sub, [...path, key, name]]);
  }
  if (isObject(schema.items)) found.push([schema.items, [...path, "items"]]);
  for (const key of ["anyOf", "allOf"]) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach((sub, n) => isObject(sub) && found.push([sub, [...path, key, n]]));
  }
  return found;
}

/** The first way a function's parameters break strict mode, in the real API's words, or null. */
function notStrict(schema: Json, path: (string | number)[] = []): string | null {
  if (isObjectSchema(schema)) {
    if (schema.additionalProperties !== false) {
      return `In context=${pythonTuple(path)}, 'additionalProperties' is required to be supplied and to be false.`;
    }
    const keys = isObject(schema.properties) ? Object.keys(schema.properties) : [];
    const required = Array.isArray(schema.required) ? schema.required : [];
    const left = keys.filter((key) => !required.includes(key));
    if (left.length) {
      return `In context=${pythonTuple(path)}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${left[0]}'.`;
    }
  }
  for (const [sub, at] of subschemas(schema, path)) {
    const found = notStrict(sub, at);
    if (found) return found;
  }
  return null;
}

/** A schema as the API makes it strict when `strict` is left out: closed objects with every property required. */
function strictened(schema: Json): Json {
  const copy: Json = structuredClone(schema);
  const visit = (node: Json) => {
    if (isObjectSchema(node)) {
      node.additionalProperties = false;
      node.required = isObject(node.properties) ? Object.keys(node.properties) : [];
    }
    for (const [sub] of subschemas(node, [])) visit(sub);
  };
  visit(copy);
  return copy;
}

/** The first problem of a Responses API request that needs no state (items, pairing, tools, options), or null. */
function invalidResponsesRequest(body: Json): Problem | null {
  if (body.model === undefined || body.model === null || body.model === "") return missing("model");
  if (typeof body.model !== "string") return wrongType("model", "a string", body.model);
  const input = body.input;
  if (input === undefined || input === null) return missing("input");
  if (typeof input !== "string") {
    if (!Array.isArray(input)) return wrongType("input", "one of a string or array of objects", input);
    for (const [n, item] of input.entries()) {
      const found = invalidItem(item, `input[${n}]`);
      if (found) return found;
    }
    // Every function_call_output answers a function_call before it, and every function_call is answered.
    const calls: string[] = [];
    for (const item of input as Json[]) {
      if (item.type === "function_call") calls.push(item.call_id as string);
      if (item.type === "function_call_output" && !calls.includes(item.call_id as string)) {
        return problem(`No tool call found for function call output with call_id ${String(item.call_id)}.`, "input");
      }
    }
    const answered = new Set((input as Json[]).filter((item) => item.type === "function_call_output").map((item) => item.call_id));
    const unanswered = calls.find((id) => !answered.has(id));
    if (unanswered !== undefined) return problem(`No tool output found for function call ${unanswered}.`, "input");
  }
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== "string") {
    return wrongType("instructions", "a string", body.instructions);
  }
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) return wrongType("tools", "an array", body.tools);
    for (const [n, tool] of body.tools.entries()) {
      const at = `tools[${n}]`;
      if (!isObject(tool)) return wrongType(at, "an object", tool);
      if (tool.type === undefined) return missing(`${at}.type`);
      if (!TOOL_TYPES.includes(tool.type as string)) return wrongValue(`${at}.type`, tool.type, TOOL_TYPES);
      if (tool.type === "function") {
        const { name, description, parameters, strict } = tool;
        if (name === undefined) return missing(`${at}.name`);
        if (typeof name !== "string") return wrongType(`${at}.name`, "a string", name);
        if (!TOOL_NAME.test(name)) {
          return problem(`Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `${at}.name`, "invalid_value");
        }
        if (description !== undefined && description !== null && typeof description !== "string") return wrongType(`${at}.description`, "a string", description);
        if (parameters === undefined) return missing(`${at}.parameters`);
        if (parameters !== null && !isObject(parameters)) return wrongType(`${at}.parameters`, "an object", parameters);
        if (strict !== undefined && strict !== null && typeof strict !== "boolean") return wrongType(`${at}.strict`, "a boolean", strict);
        const broken = strict === true && isObject(parameters) ? notStrict(parameters) : null;
        if (broken) return problem(`Invalid schema for function '${name}': ${broken}`, `${at}.parameters`, "invalid_function_parameters");
        continue;
      }
      const container = tool.container;
      if (container === undefined || container === null) return missing(`${at}.container`);
      if (typeof container === "string") {
        if (!container) return wrongType(`${at}.container`, "a non-empty string", container);
        continue;
      }
      if (!isObject(container)) return wrongType(`${at}.container`, "one of a string or object", container);
      if (container.type === undefined) return missing(`${at}.container.type`);
      if (container.type !== "auto") return wrongValue(`${at}.container.type`, container.type, ["auto"]);
      const fileIds = container.file_ids;
      if (fileIds !== undefined && !(Array.isArray(fileIds) && fileIds.every((id) => typeof id === "string"))) {
        return wrongType(`${at}.container.file_ids`, "an array of strings", fileIds);
      }
      if (container.memory_limit !== undefined && container.memory_limit !== null && !MEMORY_LIMITS.includes(container.memory_limit as string)) {
        return wrongValue(`${at}.container.memory_limit`, container.memory_limit, MEMORY_LIMITS);
      }
    }
  }
  if (body.include !== undefined && body.include !== null) {
    if (!Array.isArray(body.include)) return wrongType("include", "an array", body.include);
    for (const [n, value] of body.include.entries()) {
      if (!INCLUDABLE.includes(value as string)) return wrongValue(`include[${n}]`, value, INCLUDABLE);
    }
  }
  for (const flag of ["stream", "store", "parallel_tool_calls"]) {
    if (body[flag] !== undefined && body[flag] !== null && typeof body[flag] !== "boolean") return wrongType(flag, "a boolean", body[flag]);
  }
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (body.stream !== true) return problem("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "invalid_value");
    if (!isObject(body.stream_options)) return wrongType("stream_options", "an object", body.stream_options);
  }
  if (body.reasoning !== undefined && body.reasoning !== null) {
    if (!isObject(body.reasoning)) return wrongType("reasoning", "an object", body.reasoning);
    const summary = body.reasoning.summary;
    if (summary !== undefined && summary !== null && !SUMMARY_SETTINGS.includes(summary as string)) return wrongValue("reasoning.summary", summary, SUMMARY_SETTINGS);
  }
  const limit = body.max_output_tokens;
  if (limit !== undefined && limit !== null) {
    if (!Number.isInteger(limit)) return wrongType("max_output_tokens", "an integer", limit);
    if ((limit as number) < 16) {
      return problem(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${String(limit)} instead.`, "max_output_tokens", "integer_below_min_value");
    }
  }
  return null;
}

/** The tools as the response object repeats them: function tools with their defaults (strict unless turned off). */
function echoedTools(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  return (tools as Json[]).map((tool) => {
    if (tool.type !== "function") return tool;
    const strict = tool.strict !== false;
    const parameters = strict && tool.strict !== true && isObject(tool.parameters) ? strictened(tool.parameters) : (tool.parameters ?? null);
    return { type: "function", name: tool.name, description: tool.description ?? null, parameters, strict };
  });
}

/** The first code_interpreter tool of a request and its index. */
function codeInterpreterTool(body: Json): { index: number; container: string | Json } | null {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  const index = tools.findIndex((tool) => tool.type === "code_interpreter");
  return index < 0 ? null : { index, container: tools[index].container as string | Json };
}

/** The text of the last user message of the input. */
function lastUserText(body: Json): string | null {
  if (typeof body.input === "string") return body.input;
  const users = (body.input as Json[]).filter((item) => (item.type === undefined || item.type === "message") && item.role === "user");
  const last = users[users.length - 1];
  if (!last) return null;
  if (typeof last.content === "string") return last.content;
  return (last.content as Json[])
    .filter((part) => part.type === "input_text")
    .map((part) => String(part.text))
    .join("\n");
}

/** The first ```python block of a text; it ends at a line that is only a fence, so code that mentions ``` stays whole. */
function pythonBlock(text: string): string | null {
  return /```python[ \t]*\r?\n([\s\S]*?)\r?\n```[ \t]*(?:\r?\n|$)/.exec(text)?.[1] ?? null;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
/** Random filler for the `obfuscation` field of delta events, as the real API pads them. */
const obfuscation = () => alphanumeric(1 + randomInt(16));

// ---------------------------------------------------------------------------------------------------------------
// Containers: a temp folder each, with one long-lived python3 interpreter.

/** The logs of one run are cut at this many bytes. */
const MAX_LOG_BYTES = 1024 * 1024;

/**
 * The interpreter's driver: it runs each request's code in one namespace (so variables persist), shows the value
 * of a last bare expression as a notebook does, prints tracebacks without its own frames, then writes the
 * request's end marker. Requests arrive as JSON lines on fd 3; stderr is merged into stdout, so the logs keep
 * their order; stdin is empty.
 */
const PYTHON_DRIVER = String.raw`
import ast, json, linecache, os, sys, traceback
os.dup2(1, 2)
requests = os.fdopen(3, "r", encoding="utf-8")
namespace = {"__name__": "__main__"}
count = 0
while True:
    line = requests.readline()
    if not line:
        break
    request = json.loads(line)
    count += 1
    name = "<cell %d>" % count
    source = request["code"]
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    try:
        tree = ast.parse(source, name, "exec")
    except SyntaxError as error:
        traceback.print_exception(type(error), error, None)
        tree = None
    if tree is not None:
        try:
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, name, "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
                if value is not None:
                    print(repr(value))
        except BaseException:
            kind, error, trace = sys.exc_info()
            traceback.print_exception(kind, error, trace.tb_next)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    os.write(1, request["end"].encode())
`;

interface RunOutput {
  logs: string;
  /** Why the run did not finish: it timed out, or the interpreter died; null when it finished. */
  failure: "timeout" | "exited" | null;
}

/** One python3 process for one container: runs code one request at a time, in the container's folder. */
class Interpreter {
  private readonly child: ChildProcess;
  private gone = false;
  private run: { marker: Buffer; buffer: Buffer; scanned: number; head: Buffer | null; finish: (output: RunOutput) => void } | null = null;

  constructor(dir: string) {
    const env: Record<string, string> = {
      HOME: dir,
      TMPDIR: join(dir, ".tmp"),
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      LANG: "C.UTF-8",
      PYTHONIOENCODING: "utf-8",
      PYTHONDONTWRITEBYTECODE: "1",
      MPLBACKEND: "Agg",
      // The sandbox's preinstalled libraries, as stand-ins (a tiny torch), shared with the Anthropic stand-in.
      PYTHONPATH: SANDBOX_SITE,
    };
    for (const name of ["PYENV_ROOT", "PYENV_VERSION"]) if (process.env[name]) env[name] = process.env[name];
    this.child = spawn("python3", ["-u", "-c", PYTHON_DRIVER], { cwd: dir, env, detached: true, stdio: ["ignore", "pipe", "pipe", "pipe"] });
    const take = (part: Buffer) => this.take(part);
    this.child.stdout?.on("data", take);
    this.child.stderr?.on("data", take); // only what python3 says before its driver merges stderr into stdout
    (this.child.stdio[3] as Writable).on("error", () => {}); // a write after it died: reported by "close"
    const died = () => {
      this.gone = true;
      this.finish("exited");
    };
    this.child.on("error", died);
    this.child.on("close", died);
  }

  get alive(): boolean {
    return !this.gone;
  }

  /** Runs code; a run over its time limit is stopped (with the interpreter: its state is lost). */
  execute(code: string, timeoutMs: number): Promise<RunOutput> {
    if (this.gone) return Promise.resolve({ logs: "", failure: "exited" });
    return new Promise((resolve) => {
      const marker = Buffer.from(`<kiln-run-end-${hex(16)}>`);
      const timer = setTimeout(() => this.finish("timeout"), timeoutMs);
      this.run = {
        marker,
        buffer: Buffer.alloc(0),
        scanned: 0,
        head: null,
        finish: (output) => {
          clearTimeout(timer);
          this.run = null;
          if (output.failure === "timeout") this.kill();
          resolve(output);
        },
      };
      (this.child.stdio[3] as Writable).write(`${JSON.stringify({ code, end: marker.toString() })}\n`);
    });
  }

  /** Stops the interpreter and everything it started (its process group). */
  kill(): void {
    this.gone = true;
    try {
      if (this.child.pid) process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  private take(part: Buffer): void {
    const run = this.run;
    if (!run) return; // output between runs (a thread still printing) belongs to no run
    run.buffer = Buffer.concat([run.buffer, part]);
    const at = run.buffer.indexOf(run.marker, Math.max(0, run.scanned - run.marker.length));
    if (at >= 0) {
      run.buffer = run.buffer.subarray(0, at);
      return this.finish(null);
    }
    run.scanned = run.buffer.length;
    if (!run.head && run.buffer.length > MAX_LOG_BYTES) run.head = Buffer.from(run.buffer.subarray(0, MAX_LOG_BYTES));
    if (run.head) {
      // Keep only what the marker could start in.
      run.buffer = Buffer.from(run.buffer.subarray(-run.marker.length));
      run.scanned = run.buffer.length;
    }
  }

  private finish(failure: RunOutput["failure"]): void {
    const run = this.run;
    if (!run) return;
    const logs = run.head ? `${run.head.toString("utf8")}\n[output truncated at ${MAX_LOG_BYTES} bytes]\n` : run.buffer.toString("utf8");
    run.finish({ logs, failure });
  }
}


const CONTENT_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".csv": "text/csv",
  ".txt": "text/plain",
  ".json": "application/json",
  ".html": "text/html",
  ".pdf": "application/pdf",
};

/** The parts of a multipart/form-data body by field name (binary-safe), or null when it is not one. */
function formParts(body: Buffer, contentType: string): Map<string, { filename: string | null; data: Buffer }> | null {
  const boundary = /^multipart\/form-data\s*;.*?\bboundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) return null;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts = new Map<string, { filename: string | null; data: Buffer }>();
  let at = body.indexOf(delimiter);
  if (at < 0) return null;
  for (;;) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString("latin1") === "--") return parts;
    const next = body.indexOf(delimiter, start);
    if (next < 0) return null;
    const part = body.subarray(start + 2, next - 2); // without the CRLF after the delimiter and before the next
    const split = part.indexOf("\r\n\r\n");
    if (split >= 0) {
      const disposition = /^content-disposition:(.*)$/im.exec(part.subarray(0, split).toString("utf8"))?.[1] ?? "";
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
      const encoded = /\bfilename\*=(?:UTF-8)?''([^;\s]+)/i.exec(disposition)?.[1];
      const plain = /\bfilename="([^"]*)"/i.exec(disposition)?.[1]?.replace(/%22/g, '"');
      const filename = encoded !== undefined ? decodeURIComponent(encoded) : (plain ?? null);
      if (name !== undefined && !parts.has(name)) parts.set(name, { filename, data: part.subarray(split + 4) });
    }
    at = next;
  }
}

/** A list page as the API pages lists: newest first unless `order=asc`, `limit` (1–100, default 20), `after`. */
function listPage<T extends { id: string }>(oldestFirst: T[], url: URL): Json {
  const ordered = url.searchParams.get("order") === "asc" ? oldestFirst : [...oldestFirst].reverse();
  const after = url.searchParams.get("after");
  const start = after ? ordered.findIndex((entry) => entry.id === after) + 1 : 0;
  const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit")) || 20));
  const data = ordered.slice(start, start + limit);
  return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: start + limit < ordered.length };
}

interface Container {
  id: string;
  name: string;
  dir: string;
  /** Unix seconds. */
  createdAt: number;
  /** Date.now() of its last activity (a run, a file written or removed). */
  lastActive: number;
  idleMs: number;
  minutes: number;
  memoryLimit: string;
  expired: boolean;
  /** Its container files by id, oldest first. */
  files: Map<string, ContainerFileObject>;
  interpreter: Interpreter | null;
  /** Runs under way; it does not expire meanwhile. */
  busy: number;
  /** The end of the last queued run: runs take turns. */
  turn: Promise<unknown>;
}

interface RunResult {
  logs: string;
  status: "completed" | "failed";
  /** The container files the run created or changed. */
  files: ContainerFileObject[];
  /** `data:image/png;base64,…` of each .png file the run created. */
  images: string[];
}

interface Session {
  queue: Reply[];
  requests: RecordedRequest[];
  cors: boolean;
  models: string[];
  requireKey: string | null;
  responsesQueue: ResponsesReply[];
  responsesRequests: RecordedRequest[];
  containers: Map<string, Container>;
  /** Reasoning items answered with `store` on: they may come back by id alone. */
  storedReasoning: Set<string>;
}

/** One step of a response's output: a scripted item, or a code interpreter run with the message after it. */
type Step = ResponsesOutput | { type: "code"; container: Container; code: string; timeoutMs: number; text: string };

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const port = options.port ?? 0;
  const token = options.token ?? randomBytes(16).toString("hex");
  if (!/^[\w-]{16,}$/.test(token)) throw new Error("startFakeOpenAI: the token must be at least 16 of A-Z a-z 0-9 _ -");
  const tokenBytes = Buffer.from(token, "utf8");
  const execTimeoutMs = options.execTimeoutMs ?? 30_000;
  const containerIdleMs = options.containerIdleMs ?? 20 * 60_000;
  /** Signs the encrypted_content of reasoning items, so that only this server's are accepted back. */
  const reasoningKey = randomBytes(32);

  const sessions = new Map<string, Session>();
  const sessionOf = (name: string): Session => {
    let session = sessions.get(name);
    if (!session) {
      session = {
        queue: [],
        requests: [],
        cors: true,
        models: [...DEFAULT_MODELS],
        requireKey: null,
        responsesQueue: [],
        responsesRequests: [],
        containers: new Map(),
        storedReasoning: new Set(),
      };
      sessions.set(name, session);
    }
    return session;
  };

  // Containers ------------------------------------------------------------------------------------------------

  async function newContainer(session: Session, name: string, minutes?: number, memoryLimit = "1g"): Promise<Container> {
    const dir = await mkdtemp(join(tmpdir(), "kiln-openai-container-"));
    await mkdir(join(dir, ".tmp"));
    const idleMs = minutes !== undefined ? minutes * 60_000 : containerIdleMs;
    const container: Container = {
      id: `cntr_${hex(24)}`,
      name,
      dir,
      createdAt: Math.floor(Date.now() / 1000),
      lastActive: Date.now(),
      idleMs,
      minutes: minutes ?? Math.max(1, Math.round(containerIdleMs / 60_000)),
      memoryLimit,
      expired: false,
      files: new Map(),
      interpreter: null,
      busy: 0,
      turn: Promise.resolve(),
    };
    session.containers.set(container.id, container);
    return container;
  }

  /** Expires a container now: its interpreter stops and its folder goes, files and all. */
  async function expire(container: Container): Promise<void> {
    container.expired = true;
    container.interpreter?.kill();
    container.interpreter = null;
    await rm(container.dir, { recursive: true, force: true });
  }

  /** Whether a container is still running (one idle for too long expires here). */
  async function live(container: Container): Promise<boolean> {
    if (!container.expired && !container.busy && Date.now() - container.lastActive >= container.idleMs) await expire(container);
    return !container.expired;
  }

  const sweeper = setInterval(
    () => {
      for (const session of sessions.values()) for (const container of session.containers.values()) void live(container).catch(() => {});
    },
    Math.min(60_000, Math.max(1_000, containerIdleMs / 2)),
  );
  sweeper.unref();

  async function dropSession(name: string): Promise<void> {
    const session = sessions.get(name);
    sessions.delete(name);
    if (session) await Promise.all([...session.containers.values()].map(expire));
  }

  const containerObject = (container: Container) => ({
    id: container.id,
    object: "container",
    created_at: container.createdAt,
    status: container.expired ? "expired" : "running",
    expires_after: { anchor: "last_active_at", minutes: container.minutes },
    last_active_at: Math.floor(container.lastActive / 1000),
    memory_limit: container.memoryLimit,
    name: container.name,
  });

  /** Makes a container file of a file in its folder (replacing any of the same path). */
  function addFile(container: Container, path: string, bytes: number, source: ContainerFileObject["source"]): ContainerFileObject {
    for (const [id, file] of container.files) if (file.path === path) container.files.delete(id);
    const file: ContainerFileObject = {
      id: `cfile_${hex(16)}`,
      object: "container.file",
      container_id: container.id,
      path,
      bytes,
      created_at: Math.floor(Date.now() / 1000),
      source,
    };
    container.files.set(file.id, file);
    return file;
  }

  /** Runs code in a container's interpreter (started if needed), after any run already under way there. */
  function runCode(container: Container, code: string, timeoutMs: number): Promise<RunResult> {
    const run = async (): Promise<RunResult> => {
      if (container.expired) return { logs: "Container is expired.\n", status: "failed", files: [], images: [] };
      container.busy++;
      try {
        container.lastActive = Date.now();
        const before = await listFiles(container.dir);
        if (!container.interpreter?.alive) container.interpreter = new Interpreter(container.dir);
        const { logs, failure } = await container.interpreter.execute(code, timeoutMs);
        let note = "";
        if (failure) {
          container.interpreter.kill();
          container.interpreter = null;
          const separator = logs && !logs.endsWith("\n") ? "\n" : "";
          note =
            failure === "timeout"
              ? `${separator}Execution timed out after ${timeoutMs / 1000} s: the run was stopped with its interpreter, and the next run starts a new one without the old variables.\n`
              : `${separator}The interpreter exited during the run: the next run starts a new one without the old variables.\n`;
        }
        container.lastActive = Date.now();
        const after = await listFiles(container.dir);
        // Files the run removed stop being container files; those it created or changed become ones.
        for (const [id, file] of container.files) if (!after.has(file.path)) container.files.delete(id);
        const files: ContainerFileObject[] = [];
        const images: string[] = [];
        for (const [path, now] of [...after].sort(([a], [b]) => a.localeCompare(b))) {
          const then = before.get(path);
          if (then && then.mtime === now.mtime && then.size === now.size) continue;
          const known = [...container.files.values()].find((file) => file.path === path);
          if (known) {
            known.bytes = now.size;
            files.push(known);
          } else files.push(addFile(container, path, now.size, "assistant"));
          if (!then && extname(path).toLowerCase() === ".png") images.push(`data:image/png;base64,${(await readFile(path)).toString("base64")}`);
        }
        return { logs: logs + note, status: failure ? "failed" : "completed", files, images };
      } finally {
        container.busy--;
      }
    };
    const result = container.turn.then(run, run);
    container.turn = result.catch(() => {});
    return result;
  }

  // Encrypted reasoning ---------------------------------------------------------------------------------------

  /** An opaque token this server can recognize later: "gAAAAA" (as the real ones start), a nonce and its MAC. */
  function encryptedReasoning(): string {
    const nonce = randomBytes(24);
    const mac = createHmac("sha256", reasoningKey).update(nonce).digest();
    return `gAAAAA${Buffer.concat([nonce, mac]).toString("base64")}`;
  }
  function issuedHere(content: string): boolean {
    if (!content.startsWith("gAAAAA")) return false;
    const raw = Buffer.from(content.slice(6), "base64");
    if (raw.length !== 56) return false;
    const mac = createHmac("sha256", reasoningKey).update(raw.subarray(0, 24)).digest();
    return timingSafeEqual(mac, raw.subarray(24));
  }

  /** The reasoning items of the input: each must carry encrypted content from here, or (with `store`) be one stored here. */
  function reasoningRefusal(body: Json, session: Session): Refusal | null {
    if (!Array.isArray(body.input)) return null;
    for (const item of body.input as Json[]) {
      if (item.type !== "reasoning") continue;
      const content = item.encrypted_content;
      if (typeof content === "string" && content) {
        if (issuedHere(content)) continue;
        const shown = content.length > 8 ? `${content.slice(0, 4)}...${content.slice(-4)}` : content;
        return refusal(problem(`The encrypted content ${shown} could not be verified.`, null, "invalid_encrypted_content"));
      }
      if (body.store === false) {
        return refusal(
          problem(`Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, "input"),
          404,
        );
      }
      if (!session.storedReasoning.has(item.id as string)) return refusal(problem(`Item with id '${String(item.id)}' not found.`, "input"), 404);
    }
    return null;
  }

  // The server ------------------------------------------------------------------------------------------------

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, "server_error", String(error));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = routedUrl(req.url ?? "/", tokenBytes); // the path without the token, for the routes below
    if (!url) {
      // Not this test run's client: answer before reading the body, record nothing.
      req.resume();
      corsHeaders(res);
      res.setHeader("connection", "close");
      return sendError(res, 404, "invalid_request_error", "Not found: this server answers only under its test run's token (/<token>/…).");
    }
    const path = url.pathname.replace(/\/+$/, "");

    if (path.startsWith("/__kiln/")) {
      corsHeaders(res);
      if (req.method === "OPTIONS") return preflight(req, res);
      return control(req, res, `${req.method} ${path}`, url);
    }

    const match = /^\/([^/]+)\/v1(\/.*)?$/.exec(path);
    if (!match || !SESSION.test(match[1])) {
      req.resume();
      corsHeaders(res);
      if (req.method === "OPTIONS") return preflight(req, res);
      return sendError(res, 404, "invalid_request_error", `Invalid URL (${req.method} ${url.pathname}): a session's routes are /<session>/v1/…`);
    }
    const session = sessionOf(match[1]);
    const route = `${req.method} ${match[2] ?? ""}`;
    if (session.cors) corsHeaders(res);
    if (req.method === "OPTIONS") {
      req.resume();
      return session.cors ? preflight(req, res) : void res.writeHead(204).end();
    }

    const bytes = await readBody(req);
    const raw = bytes.toString("utf8");
    const authorization = header(req, "authorization");
    const recorded = route === "POST /chat/completions" ? session.requests : route === "POST /responses" ? session.responsesRequests : null;
    if (recorded) {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      recorded.push({ body, headers: { authorization } });
    }
    if (session.requireKey !== null) {
      const given = /^Bearer\s+(.*)$/i.exec(authorization ?? "")?.[1]?.trim();
      if (given !== session.requireKey) {
        const message = given
          ? `Incorrect API key provided: ${given.length > 8 ? `${given.slice(0, 3)}***${given.slice(-4)}` : "***"}.`
          : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
        return sendError(res, 401, "invalid_request_error", message, null, "invalid_api_key");
      }
    }

    if (route === "GET /models") {
      const data = session.models.map((id) => ({ id, object: "model", created: MODELS_CREATED, owned_by: "library" }));
      return sendJson(res, 200, { object: "list", data });
    }
    if (route.startsWith("GET /models/")) {
      const wanted = decodeURIComponent(route.slice("GET /models/".length));
      if (!session.models.includes(wanted)) return sendError(res, 404, "invalid_request_error", `model "${wanted}" not found`, "model", "model_not_found");
      return sendJson(res, 200, { id: wanted, object: "model", created: MODELS_CREATED, owned_by: "library" });
    }
    if (route === "POST /responses") return handleResponses(req, res, session, raw);
    const containerRoute = /^\/containers(?:\/([^/]+)(?:(\/files)(?:\/([^/]+)(\/content)?)?)?)?$/.exec(match[2] ?? "");
    if (containerRoute) return handleContainers(req, res, session, url, bytes, containerRoute);
    if (route !== "POST /chat/completions") {
      return sendError(res, 404, "invalid_request_error", `Invalid URL (${req.method} /v1${match[2] ?? ""})`);
    }

    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, "invalid_request_error", "We could not parse the JSON body of your request. The API expects a JSON payload, but what was sent was not valid JSON.");
    }
    if (!isObject(body)) return sendError(res, 400, "invalid_request_error", `Invalid type for request body: expected an object, but got ${typeName(body)} instead.`, null, "invalid_type");
    const refused = invalid(body);
    if (refused) return sendError(res, 400, "invalid_request_error", refused.message, refused.param, refused.code);

    const reply = session.queue.shift() ?? { content: [{ type: "text", text: "(no scripted reply)" }] };
    if ("status" in reply) {
      const type = reply.error.type ?? (reply.status < 500 ? "invalid_request_error" : "server_error");
      return sendJson(res, reply.status, { error: { message: reply.error.message, type, param: null, code: reply.error.code ?? null } }, reply.headers);
    }
    await sendCompletion(req, res, body, reply);
  }

  /** `POST /v1/responses`: validation, then the session's next scripted reply. */
  async function handleResponses(req: IncomingMessage, res: ServerResponse, session: Session, raw: string): Promise<void> {
    const refuse = (found: Refusal) => sendError(res, found.status, "invalid_request_error", found.message, found.param, found.code);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, "invalid_request_error", "We could not parse the JSON body of your request. The API expects a JSON payload, but what was sent was not valid JSON.");
    }
    if (!isObject(body)) return sendError(res, 400, "invalid_request_error", `Invalid type for request body: expected an object, but got ${typeName(body)} instead.`, null, "invalid_type");
    const invalidRequest = invalidResponsesRequest(body);
    if (invalidRequest) return refuse(refusal(invalidRequest));
    const unverified = reasoningRefusal(body, session);
    if (unverified) return refuse(unverified);
    if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
      // Nothing is stored here, so there is no previous response to continue.
      const id = String(body.previous_response_id);
      return refuse(refusal(problem(`Previous response with id '${id}' not found.`, "previous_response_id", "previous_response_not_found")));
    }
    if (body.conversation !== undefined && body.conversation !== null) {
      return refuse(refusal(problem("This stand-in server stores no conversations: send the whole input instead.", "conversation")));
    }
    // A code interpreter's container: one of the session's, still running; auto mode takes no uploaded files here.
    const tool = codeInterpreterTool(body);
    let container: Container | null = null;
    if (tool && typeof tool.container === "string") {
      const found = session.containers.get(tool.container);
      if (!found) return refuse(refusal(problem(`Container with id '${tool.container}' not found.`, `tools[${tool.index}].container`)));
      if (!(await live(found))) return refuse(refusal(problem("Container is expired.")));
      container = found;
    } else if (tool && isObject(tool.container) && Array.isArray(tool.container.file_ids) && tool.container.file_ids.length) {
      // This server has no Files API: no file id exists.
      return refuse(refusal(problem(`No such File object: ${String(tool.container.file_ids[0])}`, `tools[${tool.index}].container.file_ids`)));
    }

    const next = session.responsesQueue[0];
    if (next && "status" in next) {
      session.responsesQueue.shift();
      const type = next.error.type ?? (next.status < 500 ? "invalid_request_error" : "server_error");
      return sendJson(res, next.status, { error: { message: next.error.message, type, param: null, code: next.error.code ?? null } }, next.headers);
    }
    if (next && "execute" in next) {
      // Mistakes in the script, not in the request: the reply stays queued.
      if (!tool) return sendError(res, 400, "invalid_request_error", "tools: an execute reply needs a code_interpreter tool in the request");
      const userText = lastUserText(body);
      const code = next.execute.code ?? (userText === null ? null : pythonBlock(userText));
      if (code === null) return sendError(res, 400, "invalid_request_error", "input: the last user message has no ```python block to execute (and the reply gives no execute.code)");
      session.responsesQueue.shift();
      if (!container) {
        // Auto mode reuses the running container of the last code interpreter call in the input, else makes one.
        const calls = Array.isArray(body.input) ? (body.input as Json[]).filter((item) => item.type === "code_interpreter_call") : [];
        const previous = session.containers.get(String(calls[calls.length - 1]?.container_id));
        container = previous && (await live(previous)) ? previous : await newContainer(session, "auto");
      }
      const step: Step = { type: "code", container, code, timeoutMs: next.execute.timeoutMs ?? execTimeoutMs, text: next.execute.text ?? "Done." };
      return respond(req, res, body, session, [step], next);
    }
    if (next) session.responsesQueue.shift();
    const reply = next ?? { output: [{ type: "message", text: "(no scripted reply)" }] };
    return respond(req, res, body, session, reply.output, reply);
  }

  /**
   * Answers one response: SSE events as the Responses API streams them when the request asked for a stream, else
   * the response JSON. Code steps really run, between their `interpreting` and `completed` events.
   */
  async function respond(req: IncomingMessage, res: ServerResponse, body: Json, session: Session, steps: Step[], options: { delayMs?: number; dropAfterEvents?: number }) {
    const { delayMs, dropAfterEvents } = options;
    const stream = body.stream === true;
    const include = new Set(Array.isArray(body.include) ? (body.include as string[]) : []);
    const padded = !(isObject(body.stream_options) && body.stream_options.include_obfuscation === false);
    const reasoning = isObject(body.reasoning) ? body.reasoning : {};
    const wantsSummary = reasoning.summary !== undefined && reasoning.summary !== null;
    const response: Json & { output: Json[] } = {
      id: `resp_${hex(24)}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "in_progress",
      background: false,
      completed_at: null,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      max_tool_calls: null,
      model: body.model,
      output: [],
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
      safety_identifier: null,
      service_tier: "default",
      store: body.store ?? true,
      temperature: body.temperature ?? 1,
      text: { format: { type: "text" }, verbosity: "medium" },
      tool_choice: body.tool_choice ?? "auto",
      tools: echoedTools(body.tools),
      top_logprobs: 0,
      top_p: body.top_p ?? 1,
      truncation: body.truncation ?? "disabled",
      usage: null,
      user: null,
      metadata: body.metadata ?? {},
    };

    if (!stream) {
      if (dropAfterEvents !== undefined) return void req.socket.destroy();
      if (delayMs) await sleep(delayMs);
    } else res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    let closed = false;
    res.on("close", () => (closed = true));
    let sequence = 0;
    /** Set once the stream stops short: the client went away, or dropAfterEvents was reached. */
    let stopped = false;
    const emit = async (type: string, data: Json) => {
      if (!stream || stopped) return;
      if (closed || (dropAfterEvents !== undefined && sequence >= dropAfterEvents)) {
        stopped = true;
        return;
      }
      const event = { type, ...data, sequence_number: sequence++ };
      await new Promise((resolve) => res.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`, resolve));
      if (delayMs) await sleep(delayMs);
    };
    const pad = (): Json => (padded ? { obfuscation: obfuscation() } : {});
    const snapshot = () => structuredClone({ ...response, output: [] });

    const message = async (text: string, annotations: Json[]) => {
      const at = { output_index: response.output.length };
      const itemId = `msg_${hex(24)}`;
      const item = { id: itemId, type: "message", status: "in_progress", content: [], role: "assistant" };
      await emit("response.output_item.added", { ...at, item });
      const part = { type: "output_text", annotations: [], logprobs: [], text: "" };
      const where = { item_id: itemId, ...at, content_index: 0 };
      await emit("response.content_part.added", { ...where, part });
      for (const delta of words(text)) await emit("response.output_text.delta", { ...where, delta, logprobs: [], ...pad() });
      for (const [n, annotation] of annotations.entries()) await emit("response.output_text.annotation.added", { ...where, annotation_index: n, annotation });
      await emit("response.output_text.done", { ...where, text, logprobs: [] });
      const done = { ...part, annotations, text };
      await emit("response.content_part.done", { ...where, part: done });
      const final = { ...item, status: "completed", content: [done] };
      response.output.push(final);
      await emit("response.output_item.done", { ...at, item: final });
    };

    const functionCall = async (name: string, args: string, call: string) => {
      const at = { output_index: response.output.length };
      const itemId = `fc_${hex(24)}`;
      const item = { id: itemId, type: "function_call", status: "in_progress", arguments: "", call_id: call, name };
      await emit("response.output_item.added", { ...at, item });
      for (const delta of pieces(args)) await emit("response.function_call_arguments.delta", { item_id: itemId, ...at, delta, ...pad() });
      await emit("response.function_call_arguments.done", { item_id: itemId, ...at, arguments: args });
      const final = { ...item, status: "completed", arguments: args };
      response.output.push(final);
      await emit("response.output_item.done", { ...at, item: final });
    };

    const reasoningItem = async (summary: string | undefined) => {
      const at = { output_index: response.output.length };
      const itemId = `rs_${hex(24)}`;
      await emit("response.output_item.added", { ...at, item: { id: itemId, type: "reasoning", summary: [] } });
      const parts: Json[] = [];
      if (wantsSummary && summary) {
        const where = { item_id: itemId, ...at, summary_index: 0 };
        await emit("response.reasoning_summary_part.added", { ...where, part: { type: "summary_text", text: "" } });
        for (const delta of words(summary)) await emit("response.reasoning_summary_text.delta", { ...where, delta, ...pad() });
        await emit("response.reasoning_summary_text.done", { ...where, text: summary });
        await emit("response.reasoning_summary_part.done", { ...where, part: { type: "summary_text", text: summary } });
        parts.push({ type: "summary_text", text: summary });
      }
      const final: Json = { id: itemId, type: "reasoning", summary: parts };
      if (include.has("reasoning.encrypted_content")) final.encrypted_content = encryptedReasoning();
      if (body.store !== false) session.storedReasoning.add(itemId);
      response.output.push(final);
      await emit("response.output_item.done", { ...at, item: final });
    };

    const codeRun = async (step: Extract<Step, { type: "code" }>) => {
      const at = { output_index: response.output.length };
      const itemId = `ci_${hex(24)}`;
      const item = { id: itemId, type: "code_interpreter_call", status: "in_progress", code: "", container_id: step.container.id, outputs: null };
      const where = { item_id: itemId, ...at };
      await emit("response.output_item.added", { ...at, item });
      await emit("response.code_interpreter_call.in_progress", where);
      for (const delta of pieces(step.code)) await emit("response.code_interpreter_call_code.delta", { ...where, delta, ...pad() });
      await emit("response.code_interpreter_call_code.done", { ...where, code: step.code });
      await emit("response.code_interpreter_call.interpreting", where);
      if (stopped) return;
      const result = await runCode(step.container, step.code, step.timeoutMs);
      if (result.status === "completed") await emit("response.code_interpreter_call.completed", where);
      const outputs = include.has("code_interpreter_call.outputs")
        ? [{ type: "logs", logs: result.logs }, ...result.images.map((url) => ({ type: "image", url }))]
        : null;
      const final = { ...item, status: result.status, code: step.code, outputs };
      response.output.push(final);
      await emit("response.output_item.done", { ...at, item: final });
      // The message cites every file the run created or changed: the span of its name in the text, else the end.
      const annotations = result.files.map((file) => {
        const filename = basename(file.path);
        const start = step.text.indexOf(filename);
        const [startIndex, endIndex] = start >= 0 ? [start, start + filename.length] : [step.text.length, step.text.length];
        return { type: "container_file_citation", container_id: step.container.id, file_id: file.id, filename, start_index: startIndex, end_index: endIndex };
      });
      await message(step.text, annotations);
    };

    await emit("response.created", { response: snapshot() });
    await emit("response.in_progress", { response: snapshot() });
    for (const step of steps) {
      if (stopped) break;
      if (step.type === "message") await message(step.text, []);
      else if (step.type === "function_call") await functionCall(step.name, step.arguments, step.call_id ?? callId());
      else if (step.type === "reasoning") await reasoningItem(step.summary);
      else await codeRun(step);
    }

    const inputTokens = tokens(JSON.stringify([body.instructions ?? "", body.input, body.tools ?? []]));
    const reasoningTokens = response.output.filter((item) => item.type === "reasoning").length * 64;
    const outputTokens = tokens(JSON.stringify(response.output)) + reasoningTokens;
    Object.assign(response, {
      status: "completed",
      completed_at: Math.floor(Date.now() / 1000),
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: reasoningTokens },
        total_tokens: inputTokens + outputTokens,
      },
    });
    if (!stream) return sendJson(res, 200, response);
    if (stopped || dropAfterEvents !== undefined) return void req.socket.destroy();
    await emit("response.completed", { response });
    res.end();
  }

  /** The Containers API: containers and their files, all of the session. */
  async function handleContainers(req: IncomingMessage, res: ServerResponse, session: Session, url: URL, bytes: Buffer, match: RegExpExecArray): Promise<void> {
    const [, rawId, files, rawFileId, content] = match;
    const method = req.method ?? "GET";
    const invalidUrl = () => sendError(res, 404, "invalid_request_error", `Invalid URL (${method} ${url.pathname.slice(url.pathname.indexOf("/v1/"))})`);
    const json = (): Json | null => {
      try {
        const parsed: unknown = JSON.parse(bytes.toString("utf8"));
        return isObject(parsed) ? parsed : null;
      } catch {
        return null;
      }
    };

    if (rawId === undefined) {
      if (method === "GET") return sendJson(res, 200, listPage([...session.containers.values()].map(containerObject), url));
      if (method !== "POST") return invalidUrl();
      const body = json();
      if (!body) return sendError(res, 400, "invalid_request_error", "We could not parse the JSON body of your request. The API expects a JSON payload, but what was sent was not valid JSON.");
      const invalidBody = invalidContainerRequest(body);
      if (invalidBody) return sendError(res, 400, "invalid_request_error", invalidBody.message, invalidBody.param, invalidBody.code);
      if (Array.isArray(body.file_ids) && body.file_ids.length) {
        // This server has no Files API: no file id exists.
        return sendError(res, 404, "invalid_request_error", `No such File object: ${String(body.file_ids[0])}`, "file_ids");
      }
      const minutes = isObject(body.expires_after) ? (body.expires_after.minutes as number) : undefined;
      const container = await newContainer(session, body.name as string, minutes, (body.memory_limit as string | undefined) ?? "1g");
      return sendJson(res, 200, containerObject(container));
    }

    const containerId = decodeURIComponent(rawId);
    const container = session.containers.get(containerId);
    if (!container) return sendError(res, 404, "invalid_request_error", `Container with id '${containerId}' not found.`);
    if (!files) {
      if (method === "GET") {
        await live(container);
        return sendJson(res, 200, containerObject(container));
      }
      if (method !== "DELETE") return invalidUrl();
      session.containers.delete(container.id);
      await expire(container);
      return sendJson(res, 200, { id: container.id, object: "container.deleted", deleted: true });
    }
    if (!(await live(container))) return sendError(res, 400, "invalid_request_error", "Container is expired.");

    if (rawFileId === undefined) {
      if (method === "GET") return sendJson(res, 200, listPage([...container.files.values()], url));
      if (method !== "POST") return invalidUrl();
      const type = header(req, "content-type") ?? "";
      if (!/^multipart\/form-data/i.test(type)) {
        const body = json();
        if (body && typeof body.file_id === "string") return sendError(res, 404, "invalid_request_error", `No such File object: ${body.file_id}`, "file_id");
        return sendError(res, 400, "invalid_request_error", "Missing required parameter: 'file'.", "file", "missing_required_parameter");
      }
      const form = formParts(bytes, type);
      if (!form) return sendError(res, 400, "invalid_request_error", "The request body must be multipart/form-data with a boundary.");
      const part = form.get("file");
      if (!part) return sendError(res, 400, "invalid_request_error", "Missing required parameter: 'file'.", "file", "missing_required_parameter");
      let filename = basename((part.filename ?? "").replace(/\\/g, "/"));
      if (!filename || filename === "." || filename === "..") filename = "upload";
      const path = join(container.dir, filename);
      await writeFile(path, part.data);
      container.lastActive = Date.now();
      return sendJson(res, 200, addFile(container, path, part.data.length, "user"));
    }

    const fileId = decodeURIComponent(rawFileId);
    const file = container.files.get(fileId);
    if (!file) return sendError(res, 404, "invalid_request_error", `Container file with id '${fileId}' not found.`);
    if (method === "DELETE" && !content) {
      container.files.delete(file.id);
      await rm(file.path, { force: true });
      container.lastActive = Date.now();
      return sendJson(res, 200, { id: file.id, object: "container.file.deleted", deleted: true });
    }
    if (method !== "GET") return invalidUrl();
    if (!content) return sendJson(res, 200, file);
    let data: Buffer;
    try {
      data = await readFile(file.path);
    } catch {
      return sendError(res, 404, "invalid_request_error", `Container file with id '${fileId}' not found.`);
    }
    res.writeHead(200, { "content-type": CONTENT_TYPES[extname(file.path).toLowerCase()] ?? "application/octet-stream", "content-length": String(data.length) });
    res.end(data);
  }

  async function control(req: IncomingMessage, res: ServerResponse, route: string, url: URL): Promise<void> {
    const raw = (await readBody(req)).toString("utf8");
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      return sendError(res, 400, "invalid_request_error", "The request body is not valid JSON.");
    }
    if (route === "POST /__kiln/expire-container") {
      // By id alone: container ids are unique across sessions.
      const wanted = isObject(body) ? body.id : undefined;
      for (const session of sessions.values()) {
        const container = session.containers.get(String(wanted));
        if (!container) continue;
        await expire(container);
        return sendJson(res, 200, containerObject(container));
      }
      return sendError(res, 404, "invalid_request_error", `Container with id '${String(wanted)}' not found.`);
    }
    const name = req.method === "GET" ? url.searchParams.get("session") : isObject(body) ? body.session : undefined;
    const named = typeof name === "string" && SESSION.test(name) && name !== "__kiln";
    if (!named) return sendError(res, 400, "invalid_request_error", "expected a session: [A-Za-z0-9_-]+");

    if (route === "POST /__kiln/script" || route === "POST /__kiln/script-responses") {
      if (!isObject(body) || !Array.isArray(body.replies)) return sendError(res, 400, "invalid_request_error", "expected {session: string, replies: Reply[]}");
      const session = sessionOf(name);
      const queue: unknown[] = route === "POST /__kiln/script" ? session.queue : session.responsesQueue;
      queue.push(...body.replies);
      return sendJson(res, 200, { queued: queue.length });
    }
    if (route === "GET /__kiln/requests") return sendJson(res, 200, sessions.get(name)?.requests ?? []);
    if (route === "GET /__kiln/responses-requests") return sendJson(res, 200, sessions.get(name)?.responsesRequests ?? []);
    if (route === "GET /__kiln/containers") {
      const containers = [...(sessions.get(name)?.containers.values() ?? [])];
      await Promise.all(containers.map(live));
      const snapshots: ContainerSnapshot[] = containers.map((container) => ({
        id: container.id,
        name: container.name,
        status: container.expired ? "expired" : "running",
        dir: container.dir,
        last_active_at: Math.floor(container.lastActive / 1000),
        interpreter: !!container.interpreter?.alive,
        files: [...container.files.values()],
      }));
      return sendJson(res, 200, snapshots);
    }
    if (route === "POST /__kiln/configure") {
      const config = body as Json;
      if (config.cors !== undefined && typeof config.cors !== "boolean") return sendError(res, 400, "invalid_request_error", "cors: expected a boolean");
      const models = config.models;
      if (models !== undefined && !(Array.isArray(models) && models.every((id) => typeof id === "string" && id))) {
        return sendError(res, 400, "invalid_request_error", "models: expected an array of model ids");
      }
      const key = config.requireKey;
      if (key !== undefined && key !== null && typeof key !== "string") return sendError(res, 400, "invalid_request_error", "requireKey: expected a string or null");
      const session = sessionOf(name);
      if (typeof config.cors === "boolean") session.cors = config.cors;
      if (Array.isArray(models)) session.models = [...(models as string[])];
      if (key !== undefined) session.requireKey = key || null;
      return sendJson(res, 200, { session: name, cors: session.cors, models: session.models, requireKey: session.requireKey });
    }
    if (route === "POST /__kiln/reset") {
      await dropSession(name);
      return sendJson(res, 200, { ok: true });
    }
    return sendError(res, 404, "invalid_request_error", `Invalid URL (${route})`);
  }

  const url = await new Promise<string>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${token}`));
  });
  const close = async () => {
    clearInterval(sweeper);
    await new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    });
    await Promise.all([...sessions.keys()].map(dropSession));
  };
  return { url, token, close };
}

/** The first problem of a `POST /v1/containers` body, or null. */
function invalidContainerRequest(body: Json): Problem | null {
  if (body.name === undefined || body.name === null) return missing("name");
  if (typeof body.name !== "string") return wrongType("name", "a string", body.name);
  const expiry = body.expires_after;
  if (expiry !== undefined && expiry !== null) {
    if (!isObject(expiry)) return wrongType("expires_after", "an object", expiry);
    if (expiry.anchor === undefined) return missing("expires_after.anchor");
    if (expiry.anchor !== "last_active_at") return wrongValue("expires_after.anchor", expiry.anchor, ["last_active_at"]);
    if (expiry.minutes === undefined) return missing("expires_after.minutes");
    if (!Number.isInteger(expiry.minutes)) return wrongType("expires_after.minutes", "an integer", expiry.minutes);
    if ((expiry.minutes as number) < 1) {
      return problem(`Invalid 'expires_after.minutes': integer below minimum value. Expected a value >= 1, but got ${String(expiry.minutes)} instead.`, "expires_after.minutes", "integer_below_min_value");
    }
  }
  const fileIds = body.file_ids;
  if (fileIds !== undefined && !(Array.isArray(fileIds) && fileIds.every((id) => typeof id === "string"))) return wrongType("file_ids", "an array of strings", fileIds);
  if (body.memory_limit !== undefined && body.memory_limit !== null && !MEMORY_LIMITS.includes(body.memory_limit as string)) {
    return wrongValue("memory_limit", body.memory_limit, MEMORY_LIMITS);
  }
  return null;
}

/** Answers one completion: SSE chunks when the request asked for a stream, else one JSON. */
async function sendCompletion(req: IncomingMessage, res: ServerResponse, body: Json, reply: Extract<Reply, { content: unknown }>): Promise<void> {
  const { delayMs, dropAfterChunks } = reply;
  const id = `chatcmpl-${alphanumeric(24)}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model as string;
  const calls = reply.content.flatMap((part) => (part.type === "tool_call" ? [{ ...part, id: part.id ?? callId() }] : []));
  const text = reply.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
  const finishReason = reply.finish_reason ?? (calls.length ? "tool_calls" : "stop");
  const completionTokens = tokens(text + calls.map((call) => call.name + call.arguments).join(""));
  const promptTokens = tokens(JSON.stringify(body.messages));
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const head = { id, created, model, system_fingerprint: "fp_ollama" };

  if (body.stream !== true) {
    if (delayMs) await sleep(delayMs);
    if (dropAfterChunks !== undefined) return void req.socket.destroy();
    const toolCalls = calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
    const message = { role: "assistant", content: text, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
    return sendJson(res, 200, { ...head, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finishReason }], usage });
  }

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let closed = false;
  res.on("close", () => (closed = true));
  let sent = 0;
  const write = async (data: string) => {
    if (closed) return;
    await new Promise((resolve) => res.write(`data: ${data}\n\n`, resolve));
    if (delayMs) await sleep(delayMs);
  };
  const chunk = async (delta: Json, finish: string | null = null) => {
    if (dropAfterChunks !== undefined && sent >= dropAfterChunks) return;
    sent++;
    await write(JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }));
  };

  await chunk({ role: "assistant", content: "" });
  let index = 0;
  for (const part of reply.content) {
    if (part.type === "text") {
      for (const content of words(part.text)) await chunk({ content });
      continue;
    }
    const call = calls[index];
    await chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
    for (const piece of pieces(call.arguments)) await chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    index++;
  }
  await chunk({}, finishReason);
  if (isObject(body.stream_options) && body.stream_options.include_usage === true) {
    if (dropAfterChunks === undefined || sent < dropAfterChunks) {
      sent++;
      await write(JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [], usage }));
    }
  }
  if (dropAfterChunks !== undefined) return void req.socket.destroy();
  await write("[DONE]");
  res.end();
}

/** The CORS headers of an allowed origin, and the resource policy a cross-origin isolated page needs. */
function corsHeaders(res: ServerResponse): void {
  res.setHeader("access-control-allow-origin", "*");
  res.setHeader("access-control-expose-headers", "retry-after, x-request-id");
  res.setHeader("cross-origin-resource-policy", "cross-origin");
}

function preflight(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  res.writeHead(204, {
    "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
    "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*",
    "access-control-max-age": "600",
  });
  res.end();
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** The whole body (empty for a request without one). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "application/json" });
  res.end(JSON.stringify(data));
}

function sendError(res: ServerResponse, status: number, type: string, message: string, param: string | null = null, code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param, code } });
}

// Run directly (under any TypeScript loader): serve on a free port, or PORT; the printed URL holds the token.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startFakeOpenAI({ port: Number(process.env.PORT) || 0 }).then(({ url }) => console.log(`Fake OpenAI-compatible server on ${url} (a Base URL is ${url}/<session>/v1)`));
}
