/**
 * A fake Anthropic Messages API for browser tests (node:http only), so no test reaches the real API.
 *
 * The app's `@anthropic-ai/sdk` client points its `baseURL` here. The server answers like the real API:
 * - `POST /v1/messages`: the next scripted reply, as SSE (`stream: true`) or as one message JSON. Requests are
 *   validated first (model, max_tokens, alternating roles, tool_use/tool_result pairing, tool shapes): a 400
 *   `invalid_request_error` otherwise.
 * - `GET /v1/models` and `GET /v1/models/{id}`.
 * - Auth: the key comes from `x-api-key` or, as SDK 1.x sends it, `Authorization: Bearer <key>`. A missing key
 *   or the key `bad-key` gets a 401 `authentication_error`.
 * - Every response has a `request-id`, CORS headers and `cross-origin-resource-policy: cross-origin` (the app
 *   page is cross-origin isolated); an OPTIONS preflight on any path answers 204.
 *
 * Control API, keyed by API key so that parallel tests with different keys never meet:
 * - `POST /__kiln/script` `{key, replies: Reply[]}` appends replies to the key's queue; each `/v1/messages`
 *   request consumes one. An empty queue answers the text "(no scripted reply)".
 * - `GET /__kiln/requests?key=K` → `[{body, headers}]`, every `/v1/messages` request of that key, in order.
 * - `POST /__kiln/reset` `{key}` clears the key's queue and requests.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";

export const FAKE_ANTHROPIC_PORT = 4181;

export type ScriptBlock = { type: "text"; text: string } | { type: "tool_use"; name: string; input: unknown; id?: string };
export type StopReason = "end_turn" | "tool_use" | "pause_turn" | "max_tokens";
export type Reply =
  /** `delayMs` waits between SSE events; `errorAfterBlocks` / `dropAfterBlocks` fail after N whole blocks. */
  | { content: ScriptBlock[]; stop_reason?: StopReason; delayMs?: number; errorAfterBlocks?: number; dropAfterBlocks?: number }
  | { status: number; error: { type: string; message: string }; headers?: Record<string, string> };
export interface RecordedRequest {
  body: unknown;
  headers: Record<"anthropic-version" | "x-api-key" | "authorization" | "anthropic-dangerous-direct-browser-access", string | null>;
}

const MODELS = [
  { id: "claude-sonnet-5-5", display_name: "Claude Sonnet 5.5", created_at: "2026-09-01T00:00:00Z" },
  { id: "claude-opus-5-5", display_name: "Claude Opus 5.5", created_at: "2026-09-01T00:00:00Z" },
  { id: "claude-haiku-4-5", display_name: "Claude Haiku 4.5", created_at: "2025-10-15T00:00:00Z" },
].map((model) => ({ type: "model", ...model }));

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
    if (message.role !== "user") continue;
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
  return null;
}

function blocksOf(message: Json, type: string): Json[] {
  return Array.isArray(message.content) ? message.content.filter((block): block is Json => isObject(block) && block.type === type) : [];
}

interface KeyState {
  queue: Reply[];
  requests: RecordedRequest[];
}

export async function startFakeAnthropic(port: number): Promise<{ url: string; close: () => Promise<void> }> {
  const keys = new Map<string, KeyState>();
  const stateOf = (key: string): KeyState => {
    let state = keys.get(key);
    if (!state) keys.set(key, (state = { queue: [], requests: [] }));
    return state;
  };

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
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
        "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*",
        "access-control-max-age": "600",
      });
      res.end();
      return;
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = `${req.method} ${url.pathname.replace(/\/+$/, "")}`;
    const raw = req.method === "POST" ? await readBody(req) : "";
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
      if (isObject(body) && typeof body.key === "string") keys.delete(body.key);
      return sendJson(res, 200, { ok: true });
    }
    if (route === "GET /__kiln/requests") return sendJson(res, 200, keys.get(url.searchParams.get("key") ?? "")?.requests ?? []);

    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const key = header(req, "x-api-key") ?? bearer ?? null;
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

    const reply: Reply = stateOf(key).queue.shift() ?? { content: [{ type: "text", text: "(no scripted reply)" }] };
    if ("status" in reply) return sendJson(res, reply.status, { type: "error", error: reply.error }, reply.headers);
    await sendMessage(req, res, body, reply);
  }

  const url = await new Promise<string>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
  const close = () =>
    new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    });
  return { url, close };
}

/** Answers one message from a scripted reply: SSE when the request asked for a stream, else JSON. */
async function sendMessage(req: IncomingMessage, res: ServerResponse, body: Json, reply: Extract<Reply, { content: unknown }>) {
  const content = reply.content.map((block): ScriptBlock =>
    block.type === "tool_use" ? { type: "tool_use", id: block.id ?? id("toolu_01"), name: block.name, input: block.input ?? {} } : block,
  );
  const stopReason = reply.stop_reason ?? (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn");
  const outputTokens = tokens(JSON.stringify(content));
  const usage = { input_tokens: tokens(JSON.stringify(body)), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" };
  const message = { id: id("msg_01"), type: "message", role: "assistant", model: body.model, content, stop_reason: stopReason, stop_sequence: null };
  const failAfter = reply.errorAfterBlocks ?? reply.dropAfterBlocks;

  if (body.stream !== true) {
    if (reply.dropAfterBlocks !== undefined) return void req.socket.destroy();
    if (reply.errorAfterBlocks !== undefined) return sendError(res, 529, "overloaded_error", "Overloaded");
    return sendJson(res, 200, { ...message, usage: { ...usage, output_tokens: outputTokens } });
  }

  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  let closed = false;
  res.on("close", () => (closed = true));
  const send = async (type: string, data: Json) => {
    if (closed) return;
    await new Promise((resolve) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`, resolve));
    if (reply.delayMs) await sleep(reply.delayMs);
  };

  await send("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  await send("ping", {});
  for (const [index, block] of content.entries()) {
    if (index === failAfter) break;
    if (block.type === "text") {
      await send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of chunks(block.text)) await send("content_block_delta", { index, delta: { type: "text_delta", text } });
    } else {
      await send("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      for (const json of ["", ...chunks(JSON.stringify(block.input))]) {
        await send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json } });
      }
    }
    await send("content_block_stop", { index });
  }
  if (reply.dropAfterBlocks !== undefined) return void req.socket.destroy();
  if (reply.errorAfterBlocks !== undefined) {
    await send("error", { error: { type: "overloaded_error", message: "Overloaded" } });
    return void res.end();
  }
  await send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } });
  await send("message_stop", {});
  res.end();
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function readBody(req: IncomingMessage): Promise<string> {
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

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: "error", error: { type, message } });
}

// Run directly (under any TypeScript loader): serve on FAKE_ANTHROPIC_PORT, or PORT.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startFakeAnthropic(Number(process.env.PORT) || FAKE_ANTHROPIC_PORT).then(({ url }) => console.log(`Fake Anthropic API on ${url}`));
}
