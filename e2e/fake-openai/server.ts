/**
 * A fake OpenAI-compatible Chat Completions server for browser tests (node:http only): it answers as the local
 * servers people point the app at do (Ollama's and llama.cpp's `/v1` API), so no test needs a real model.
 *
 * It answers only its own test run:
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
 * has its own reply queue, recorded requests and configuration, so tests running side by side never meet.
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
 * Control API (no session in the path; bodies are JSON):
 * - `POST /__kiln/script` `{session, replies: Reply[]}` appends replies to the session's queue.
 * - `GET /__kiln/requests?session=S` → `[{body, headers: {authorization}}]`, every chat completions request of
 *   the session, in order (refused ones included).
 * - `POST /__kiln/configure` `{session, cors?, models?, requireKey?}` changes the given settings of the session
 *   (`requireKey: null` or "" takes the key requirement away).
 * - `POST /__kiln/reset` `{session}` clears the session's queue, requests and configuration.
 */
import { randomBytes, randomInt } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
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
export interface FakeOpenAIOptions {
  /** The port to listen on (127.0.0.1); 0, the default, lets the OS pick a free one. */
  port?: number;
  /** The secret path prefix (at least 16 of `A-Z a-z 0-9 _ -`); default: 16 random bytes in hex. */
  token?: string;
}
export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/<token>`; a session's Base URL is `${url}/<session>/v1`. */
  url: string;
  /** The secret first path segment of every route. */
  token: string;
  /** Stops the server and drops every connection. */
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

interface Session {
  queue: Reply[];
  requests: RecordedRequest[];
  cors: boolean;
  models: string[];
  requireKey: string | null;
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const port = options.port ?? 0;
  const token = options.token ?? randomBytes(16).toString("hex");
  if (!/^[\w-]{16,}$/.test(token)) throw new Error("startFakeOpenAI: the token must be at least 16 of A-Z a-z 0-9 _ -");
  const tokenBytes = Buffer.from(token, "utf8");

  const sessions = new Map<string, Session>();
  const sessionOf = (name: string): Session => {
    let session = sessions.get(name);
    if (!session) sessions.set(name, (session = { queue: [], requests: [], cors: true, models: [...DEFAULT_MODELS], requireKey: null }));
    return session;
  };

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

    const raw = await bodyText(req);
    const authorization = header(req, "authorization");
    if (route === "POST /chat/completions") {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      session.requests.push({ body, headers: { authorization } });
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

  async function control(req: IncomingMessage, res: ServerResponse, route: string, url: URL): Promise<void> {
    const raw = await bodyText(req);
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      return sendError(res, 400, "invalid_request_error", "The request body is not valid JSON.");
    }
    const name = req.method === "GET" ? url.searchParams.get("session") : isObject(body) ? body.session : undefined;
    const named = typeof name === "string" && SESSION.test(name) && name !== "__kiln";
    if (!named) return sendError(res, 400, "invalid_request_error", "expected a session: [A-Za-z0-9_-]+");

    if (route === "POST /__kiln/script") {
      if (!isObject(body) || !Array.isArray(body.replies)) return sendError(res, 400, "invalid_request_error", "expected {session: string, replies: Reply[]}");
      const session = sessionOf(name);
      session.queue.push(...(body.replies as Reply[]));
      return sendJson(res, 200, { queued: session.queue.length });
    }
    if (route === "GET /__kiln/requests") return sendJson(res, 200, sessions.get(name)?.requests ?? []);
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
      sessions.delete(name);
      return sendJson(res, 200, { ok: true });
    }
    return sendError(res, 404, "invalid_request_error", `Invalid URL (${route})`);
  }

  const url = await new Promise<string>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${token}`));
  });
  const close = async () => {
    await new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    });
  };
  return { url, token, close };
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
    "access-control-allow-methods": "GET, POST, OPTIONS",
    "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*",
    "access-control-max-age": "600",
  });
  res.end();
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** The whole body as text (the empty string for a request without one). */
function bodyText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
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
