/**
 * A fake Gemini API (generativelanguage.googleapis.com) for browser tests (node:http only), so no test reaches
 * the real API. It answers `@google/genai` (the SDK) as the real API does for the calls the app makes.
 *
 * It runs Python for its code execution tool, so it answers only its own test run:
 * - It listens on 127.0.0.1 on a port the OS picks (`options.port`, default 0) and makes a secret token per
 *   start (`options.token`, default 16 random bytes in hex). Every route below lives under `/<token>/`:
 *   `startFakeGemini()` resolves to `{url, token, close}` with `url` = `http://127.0.0.1:<port>/<token>`, and the
 *   control routes are `${url}/__kiln/…`.
 * - A request whose path does not start with `/<token>/` (no token, a wrong one, an OPTIONS preflight without
 *   it) gets a 404 with a Google error body (and the CORS headers, so that a browser can read it): nothing runs,
 *   nothing is recorded and no reply is used. The token is compared in constant time.
 * - The browser tests reach it through `KILN_FAKE_GEMINI_URL`, set by e2e/support/global-setup.ts.
 *
 * Below, paths are given without the `/<token>` prefix.
 *
 * Sessions. A test addresses an "API" of its own by a session name in the path, `[A-Za-z0-9_-]+` (not `__kiln`):
 * the SDK's base URL is `${url}/<session>` (`new GoogleGenAI({apiKey, httpOptions: {baseUrl, apiVersion}})`).
 * The SDK adds the API version and the method: `POST ${baseUrl}/<version>/models/<model>:streamGenerateContent
 * ?alt=sse`, `…:generateContent`, `GET ${baseUrl}/<version>/models?pageSize=…`, with the key in the
 * `x-goog-api-key` header. Note that `@google/genai` 3.x uses `v1` unless `httpOptions.apiVersion` says
 * otherwise; the real API serves `v1beta` (what the Gemini docs use, and where new features land first) and `v1`.
 * This server answers `v1beta`, `v1` and `v1alpha` alike; the recorded `url` shows which one was used.
 * Each session has its own reply queue, recorded requests, configuration and issued thought signatures.
 *
 * Routes of a session (`<v>` is the API version):
 * - Keys: the key comes from `x-goog-api-key`, else from the `?key=` query parameter. Without one: 403
 *   `PERMISSION_DENIED` ("Method doesn't allow unregistered callers …"); the key `bad-key`: 400
 *   `INVALID_ARGUMENT` "API key not valid. Please pass a valid API key." with the `API_KEY_INVALID` ErrorInfo
 *   detail, as the real API answers a wrong key. Any other key is accepted. Checked before anything else.
 * - Errors have the real API's shape: `{error: {code, message, status}}` (`details` where the real one has them).
 * - `POST /<session>/<v>/models/{model}:streamGenerateContent` and `…:generateContent`: every such request is
 *   recorded (refused ones included), then checked in this order: the key; the model (one the session lists with
 *   `generateContent` among its methods, else 404 `NOT_FOUND` "models/x is not found for API version v, or is not
 *   supported for generateContent. …"); the body size (at most `maxRequestBytes`, default 100 MB as the real
 *   inline limit, else 400 "Request payload size exceeds the limit: N bytes."); the JSON; then the request as
 *   described under Validation (400 `INVALID_ARGUMENT`). A refused request leaves the queue as it was. A valid one
 *   gets the session's next scripted reply (an empty queue: the text "(no scripted reply)").
 *   - With `?alt=sse`: SSE as the real API sends it, `data: <GenerateContentResponse JSON>\r\n\r\n` events, no
 *     `event:` lines, no end marker. Each chunk is `{candidates: [{content: {role: "model", parts}, index: 0}],
 *     usageMetadata: {promptTokenCount, totalTokenCount}, modelVersion, responseId}` (`responseId` the same in
 *     every chunk). Text comes in about three chunks per text part, split between words; a function call comes
 *     whole in one chunk. The last chunk also has `finishReason` ("STOP", or the scripted one; the real API also
 *     says STOP after function calls) and the full `usageMetadata: {promptTokenCount, candidatesTokenCount,
 *     totalTokenCount, thoughtsTokenCount?}`. `streamGenerateContent` without `alt=sse` answers the same chunks
 *     as one JSON array, as the real API does.
 *   - `generateContent`: one GenerateContentResponse JSON with the whole parts and `finishReason`.
 *   - `delayMs` waits between chunks (before the answer, without a stream); `dropAfterChunks: N` destroys the
 *     socket after N chunks (without a stream: at once). `@google/genai` 3.x resumes a dropped stream only with a
 *     `continuationToken`, which this server never sends, so the SDK reports the drop.
 * - `POST /<session>/<v>/models/{model}:countTokens` → `{totalTokens}` (a rough count; not recorded).
 * - `GET /<session>/<v>/models` → `{models: [{name: "models/<id>", version, displayName, description,
 *   inputTokenLimit, outputTokenLimit, supportedGenerationMethods, …}], nextPageToken?}`, `pageSize` (default
 *   50, at most 1000) and `pageToken` as the real API. Default models: gemini-3-flash, gemini-3-pro,
 *   gemini-2.5-pro, gemini-2.5-flash (`generateContent`, `countTokens`, …) and gemini-embedding-001 (`embedContent`
 *   only: a model picker should leave it out). `GET /<session>/<v>/models/{id}` one of them, or a 404.
 * - CORS: by default every response carries `access-control-allow-origin: *`, `access-control-expose-headers`
 *   and `cross-origin-resource-policy: cross-origin` (the app page is cross-origin isolated), and an OPTIONS
 *   preflight answers 204 allowing the method and headers the browser asks for (`x-goog-api-key`,
 *   `x-goog-api-client`, …). A session configured with `cors: false` sends none of these headers, its preflights
 *   included (still 204): the browser then refuses the request and the page sees a network error.
 *
 * Validation (the real API's messages, or close to them; 400 `INVALID_ARGUMENT`). Field names may be
 * lowerCamelCase or snake_case, as the real API's JSON parser takes both; unknown fields of the request, a
 * content, a part, a blob, a function call or response, a tool or a function declaration are refused
 * ("Invalid JSON payload received. Unknown name …"); a single object stands for a one-element list where a list
 * is expected (the real parser allows that too).
 * - `contents` non-empty; each content's `role` "user" or "model" (missing: "user"); `parts` non-empty; each part
 *   has exactly one of `text`, `inlineData {mimeType, data (base64), displayName?}`, `fileData {mimeType?,
 *   fileUri}`, `functionCall {name, args?: object, id?}`, `functionResponse {name, response: object, id?, parts?}`,
 *   `executableCode {language: "PYTHON", code}`, `codeExecutionResult {outcome: "OUTCOME_…", output?}`, and
 *   optionally `thought: boolean`, `thoughtSignature` (base64).
 * - Function calls: a model turn with function calls must follow a user turn ("Please ensure that function call
 *   turn comes immediately after a user turn or after a function response turn."); the next content must be a
 *   user turn with as many function responses ("Please ensure that the number of function response parts is
 *   equal to the number of function call parts of the function call turn.", also when the calls are not answered
 *   at all); a user turn with function responses must follow a model turn with function calls ("Please ensure
 *   that function response turn comes immediately after a function call turn."). Stricter than the real API:
 *   each response must answer a call of that turn by `name` (and by `id` when both have one), each call once;
 *   function calls belong to model turns and function responses to user turns.
 * - Thought signatures (Gemini 3): a reply scripted with `signature: true` gives its first function call part a
 *   `thoughtSignature` (as the real API does for the first call of each step; parallel calls after it get none), or,
 *   without function calls, its last part (streamed: in a final chunk with an empty text part, as the real API
 *   may). A function call of the current turn (the contents after the last user turn that is not only function
 *   responses) that this server issued with a signature (same name, args and id) must come back with it:
 *   "Function call is missing a thought_signature in functionCall parts. … function call `default_api:<name>` ,
 *   position <n> …" (n: the content's position, from 1). A signature this session never issued, or one on another
 *   part than the one it was issued for, is "Corrupted thought signature." The documented stand-ins
 *   `skip_thought_signature_validator` and `context_engineering_is_the_way_to_go` are accepted anywhere, as by the
 *   real API.
 * - `tools`: each an object with `functionDeclarations [{name, description?, parameters? | parametersJsonSchema?}]`
 *   (names as the real API allows: a letter or `_` first, then letters, digits, `_ . : -`, at most 64; not both
 *   `parameters` and `parametersJsonSchema`; a name declared twice is refused), `codeExecution: {}`, or another
 *   built-in tool (`googleSearch`, `urlContext`, … accepted as is).
 * - `systemInstruction` a content (its parts checked as a user turn's); `generationConfig` and `toolConfig`
 *   objects (the numbers and `thinkingConfig` of `generationConfig` type-checked).
 *
 * Scripted replies (`Reply`):
 * - `{parts: [{text, thought?} | {functionCall: {name, args?, id?}}], signature?, finishReason?, delayMs?,
 *   dropAfterChunks?}` answers those parts (`args` default `{}`; an `id` only when scripted, as the Gemini API
 *   gives none).
 * - `{status, error: {code?, message, status, details?}, headers?}` answers that HTTP status with `{error: {code
 *   (default: the status), message, status, details?}}`.
 * - `{execute: {code?, text?, timeoutMs?}, delayMs?, dropAfterChunks?}` is the model using its code execution
 *   tool; it answers a request whose `tools` hold `codeExecution` (without one, or without code to run: a 400 with
 *   this server's own message, and the reply stays queued).
 *
 * Code execution. The "model" runs the first ```python fenced block of the last user turn with text (or
 * `execute.code`: a model that changed the code) with the host's `python3`, statelessly, as the real tool: every
 * run is a fresh process in a fresh temp folder (its working directory and `HOME`; `TMPDIR` is beside
 * it, `MPLBACKEND=Agg`), removed afterwards. Before the run, every `inlineData` part of every user turn of the request
 * is written into that folder: named by its `displayName` (the file name part of it) when it has one, else
 * `input_file_<n><ext>`, n counting the user turns' `inlineData` parts from 0 in order (named ones included) and
 * the extension from the MIME type (`.csv`, `.txt`, `.png`, `.jpg`, `.json`, …; none when unknown). The
 * `input_file_<n>` names are what the real tool is reported to use; `displayName` is the SDK's documented way to
 * name a blob for the code execution tool (the Gemini docs do not say how the sandbox names files). A later file
 * of the same name replaces an earlier one. A run may take `execTimeoutMs` (default 30 s, the real limit) or the
 * reply's `timeoutMs`; then its process group is killed. The answer's parts: `executableCode {language: "PYTHON",
 * code}`, `codeExecutionResult {outcome, output?}` (`OUTCOME_OK` with stdout when the exit status is 0,
 * `OUTCOME_FAILED` with stdout then stderr otherwise, `OUTCOME_DEADLINE_EXCEEDED` with whatever output came before
 * the limit; `output` is left out when empty, as the real JSON leaves out empty strings), an `inlineData
 * {mimeType: "image/png", data}` part for each `.png` file the run created or changed (by path), then the text
 * `execute.text ?? "Done."`. Streamed: one chunk for each of the first parts, then the text in pieces.
 *
 * Deviations from the real API, besides the stricter pairing and the fake's own 400s above: the real tool
 * returns Matplotlib figures shown by the code as images (this server, files the code writes, so that tests need no
 * Matplotlib) and may run several code blocks per answer (this server, one); its sandbox has its own libraries and
 * no network (this server's runs have the host's Python and are not sandboxed: tests only); the real API
 * accepts only certain MIME types inline (this server, any); no `continuationToken`, `promptFeedback`,
 * `safetyRatings`, `citationMetadata` or grounding; `candidateCount` is ignored (always one candidate); token
 * counts are rough (about 4 characters a token).
 *
 * Control API (no session in the path; bodies are JSON):
 * - `POST /__kiln/script` `{session, replies: Reply[]}` appends replies to the session's queue.
 * - `GET /__kiln/requests?session=S` → `[{url, body, headers: {"x-goog-api-key"}}]`, every generateContent and
 *   streamGenerateContent request of the session in order (refused ones included); `url` is the path after the
 *   session with the query, e.g. `/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse`.
 * - `POST /__kiln/configure` `{session, cors?, models?}` changes the given settings of the session; `models` is
 *   a list of ids or `{name, displayName?, supportedGenerationMethods?}` (default methods: a chat model's).
 * - `POST /__kiln/reset` `{session}` clears the session's queue, requests, configuration and signatures.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { listFiles, runProcess, sandboxEnv } from "../support/sandbox-process.ts";
import { routedUrl } from "../support/token-route.ts";

export type ScriptPart =
  /** `thought: true`: a thought summary part (as with `thinkingConfig.includeThoughts`). */
  | { text: string; thought?: boolean }
  /** `id` is sent only when given (the Gemini API gives function calls none). */
  | { functionCall: { name: string; args?: Record<string, unknown>; id?: string } };
export interface ExecOptions {
  /** Run this instead of the ```python block of the last user turn (a model that changed the code). */
  code?: string;
  /** The text after the result (default "Done."). */
  text?: string;
  /** This run's time limit in ms (default: the server's `execTimeoutMs`, 30 s). */
  timeoutMs?: number;
}
export type Reply =
  /**
   * `signature`: give the first function call (else the last part) a `thoughtSignature`, as Gemini 3 does.
   * `delayMs` waits between chunks; `dropAfterChunks` destroys the socket after N chunks.
   */
  | { parts: ScriptPart[]; signature?: boolean; finishReason?: string; delayMs?: number; dropAfterChunks?: number }
  | { status: number; error: { code?: number; message: string; status: string; details?: unknown[] }; headers?: Record<string, string> }
  /** Server-side code execution of the code the last user turn shows (see the header comment). */
  | { execute: ExecOptions; delayMs?: number; dropAfterChunks?: number };
export interface RecordedRequest {
  /** The path after the session, with the query: `/v1beta/models/<model>:streamGenerateContent?alt=sse`. */
  url: string;
  /** The parsed JSON body (the raw text when it is not JSON). */
  body: unknown;
  headers: { "x-goog-api-key": string | null };
}
export interface ModelInfo {
  /** The model id, with or without `models/`. */
  name: string;
  displayName?: string;
  /** Default: a chat model's (`generateContent`, `countTokens`, `createCachedContent`, `batchGenerateContent`). */
  supportedGenerationMethods?: string[];
}
export interface SessionConfig {
  /** Send CORS headers (default true); false: none at all, as a server that does not allow the page. */
  cors?: boolean;
  /** The models `GET /<v>/models` lists and generation accepts (default: see the header comment). */
  models?: (string | ModelInfo)[];
}
export interface FakeGeminiOptions {
  /** The port to listen on (127.0.0.1); 0, the default, lets the OS pick a free one. */
  port?: number;
  /** The secret path prefix (at least 16 of `A-Z a-z 0-9 _ -`); default: 16 random bytes in hex. */
  token?: string;
  /** Default time limit of a code execution run, in ms (30 000, as the real tool). */
  execTimeoutMs?: number;
  /** Largest request body, in bytes (100 MB, the real inline limit). */
  maxRequestBytes?: number;
}
export interface FakeGemini {
  /** `http://127.0.0.1:<port>/<token>`; a session's SDK base URL is `${url}/<session>`. */
  url: string;
  /** The secret first path segment of every route. */
  token: string;
  /** Stops the server, kills running code, and removes every temp folder. */
  close: () => Promise<void>;
}

const CHAT_METHODS = ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"];
const EMBED_METHODS = ["embedContent", "countTextTokens", "countTokens", "asyncBatchEmbedContent"];
const DEFAULT_MODELS: ModelInfo[] = [
  { name: "gemini-3-flash" },
  { name: "gemini-3-pro" },
  { name: "gemini-2.5-pro" },
  { name: "gemini-2.5-flash" },
  { name: "gemini-embedding-001", supportedGenerationMethods: EMBED_METHODS },
];
const VERSIONS = ["v1beta", "v1", "v1alpha"];
const SESSION = /^[A-Za-z0-9_-]+$/;
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;
const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;
/** Stand-in signatures the real API documents as accepted when no real one is at hand. */
const DUMMY_SIGNATURES = new Set(["skip_thought_signature_validator", "context_engineering_is_the_way_to_go"]);
const MB = 1024 * 1024;

const REQUEST_FIELDS = [
  "contents",
  "tools",
  "toolConfig",
  "safetySettings",
  "systemInstruction",
  "generationConfig",
  "cachedContent",
  "model",
  "serviceTier",
  "store",
  "continuationToken",
];
const CONTENT_FIELDS = ["role", "parts"];
const DATA_FIELDS = ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult", "toolCall", "toolResponse"];
const PART_FIELDS = [...DATA_FIELDS, "thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata"];
const BLOB_FIELDS = ["mimeType", "data", "displayName"];
const FILE_DATA_FIELDS = ["mimeType", "fileUri", "displayName"];
const FUNCTION_CALL_FIELDS = ["id", "name", "args"];
const FUNCTION_RESPONSE_FIELDS = ["id", "name", "response", "parts", "willContinue", "scheduling"];
const EXECUTABLE_CODE_FIELDS = ["id", "language", "code"];
const CODE_RESULT_FIELDS = ["id", "outcome", "output"];
const TOOL_FIELDS = ["functionDeclarations", "codeExecution", "googleSearch", "googleSearchRetrieval", "urlContext", "fileSearch", "googleMaps", "computerUse", "mcpServers"];
const DECLARATION_FIELDS = ["name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema", "behavior"];
const LANGUAGES = ["LANGUAGE_UNSPECIFIED", "PYTHON"];
const OUTCOMES = ["OUTCOME_UNSPECIFIED", "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"];

const EXTENSIONS: Record<string, string> = {
  "text/csv": ".csv",
  "text/tab-separated-values": ".tsv",
  "text/plain": ".txt",
  "text/markdown": ".md",
  "text/html": ".html",
  "text/xml": ".xml",
  "application/xml": ".xml",
  "application/json": ".json",
  "text/x-python": ".py",
  "text/javascript": ".js",
  "application/pdf": ".pdf",
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
};

const MISSING_SIGNATURE =
  "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, " +
  "and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%NAME%` , " +
  "position %N%. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.";
const CALL_AFTER_USER = "Please ensure that function call turn comes immediately after a user turn or after a function response turn.";
const RESPONSE_AFTER_CALL = "Please ensure that function response turn comes immediately after a function call turn.";
const RESPONSE_COUNT = "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const modelId = (name: string) => name.replace(/^models\//, "");

/** "gemini-2.5-pro" → "Gemini 2.5 Pro". */
const displayNameOf = (id: string) =>
  id
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ");

/** JSON with object keys sorted, so that equal values compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** A text in about three pieces, split before whitespace (a text without any stays whole). */
function pieces(text: string): string[] {
  const words = text.match(/\s*\S+|\s+/g) ?? [text];
  const size = Math.max(1, Math.ceil(words.length / 3));
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(""));
  return out;
}

/** The real API's `Invalid value at '<path>' (<type>), <value>` message. */
const badValue = (at: string, type: string, value: unknown) => `Invalid value at '${at}' (${type}), ${JSON.stringify(value)}`;
const TYPE = (name: string) => `type.googleapis.com/google.ai.generativelanguage.v1beta.${name}`;
const STRUCT = "type.googleapis.com/google.protobuf.Struct";
/** The real API's message for a request that parses but breaks a rule. */
const rule = (at: string, message: string) => `* GenerateContentRequest.${at}: ${message}\n`;

/**
 * A message object with its field names in lowerCamelCase, or the real API's message for the first unknown one.
 * `null` fields count as unset, as in the real API's JSON.
 */
function fields(value: Json, known: string[], at: string): Json | string {
  const out: Json = {};
  for (const [key, field] of Object.entries(value)) {
    const name = camel(key);
    if (!known.includes(name)) {
      return at ? `Invalid JSON payload received. Unknown name "${key}" at '${at}': Cannot find field.` : `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`;
    }
    if (field !== null && field !== undefined) out[name] = field;
  }
  return out;
}

/** A repeated field's elements (a single object counts as a list of one, as the real parser takes it). */
function listOf(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  return isObject(value) ? [value] : null;
}

interface FunctionCall {
  name: string;
  args: Json;
  id?: string;
}
interface FunctionResponse {
  name: string;
  id?: string;
}
interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string; displayName?: string };
  functionCall?: FunctionCall;
  functionResponse?: FunctionResponse;
}
interface Content {
  role: "user" | "model";
  parts: Part[];
}

/** One part, checked and normalized, or the message for its first problem. */
function checkPart(raw: unknown, at: string, role: "user" | "model"): Part | string {
  if (!isObject(raw)) return badValue(at, TYPE("Part"), raw);
  const part = fields(raw, PART_FIELDS, at);
  if (typeof part === "string") return part;
  const data = DATA_FIELDS.filter((name) => part[name] !== undefined);
  if (data.length > 1) return `Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '${data[1]}'`;
  if (!data.length) return rule(`${at}.data`, "required oneof field 'data' must have one initialized field");
  const out: Part = {};
  if (part.thought !== undefined) {
    if (typeof part.thought !== "boolean") return badValue(`${at}.thought`, "TYPE_BOOL", part.thought);
    out.thought = part.thought;
  }
  if (part.thoughtSignature !== undefined) {
    const signature = part.thoughtSignature;
    if (typeof signature !== "string" || !BASE64.test(signature)) return badValue(`${at}.thought_signature`, "TYPE_BYTES", signature);
    out.thoughtSignature = signature;
  }
  const [kind] = data;
  const value = part[kind];
  const inner = `${at}.${snake(kind)}`;
  if (kind === "text") {
    if (typeof value !== "string") return badValue(inner, "TYPE_STRING", value);
    out.text = value;
  } else if (kind === "inlineData") {
    if (!isObject(value)) return badValue(inner, TYPE("Blob"), value);
    const blob = fields(value, BLOB_FIELDS, inner);
    if (typeof blob === "string") return blob;
    if (blob.mimeType === undefined || blob.mimeType === "") return rule(`${inner}.mime_type`, "Required field is not set.");
    if (typeof blob.mimeType !== "string") return badValue(`${inner}.mime_type`, "TYPE_STRING", blob.mimeType);
    if (blob.data === undefined || blob.data === "") return rule(`${inner}.data`, "Required field is not set.");
    if (typeof blob.data !== "string" || !BASE64.test(blob.data)) return badValue(`${inner}.data`, "TYPE_BYTES", String(blob.data).slice(0, 40));
    if (blob.displayName !== undefined && typeof blob.displayName !== "string") return badValue(`${inner}.display_name`, "TYPE_STRING", blob.displayName);
    out.inlineData = { mimeType: blob.mimeType, data: blob.data, ...(blob.displayName ? { displayName: blob.displayName as string } : {}) };
  } else if (kind === "fileData") {
    if (!isObject(value)) return badValue(inner, TYPE("FileData"), value);
    const file = fields(value, FILE_DATA_FIELDS, inner);
    if (typeof file === "string") return file;
    if (typeof file.fileUri !== "string" || !file.fileUri) return rule(`${inner}.file_uri`, "Required field is not set.");
  } else if (kind === "functionCall") {
    if (!isObject(value)) return badValue(inner, TYPE("FunctionCall"), value);
    const call = fields(value, FUNCTION_CALL_FIELDS, inner);
    if (typeof call === "string") return call;
    if (role !== "model") return rule(inner, 'a function call belongs to a "model" turn');
    if (call.name === undefined || call.name === "") return rule(`${inner}.name`, "Name cannot be empty.");
    if (typeof call.name !== "string") return badValue(`${inner}.name`, "TYPE_STRING", call.name);
    if (call.args !== undefined && !isObject(call.args)) return badValue(`${inner}.args`, STRUCT, call.args);
    if (call.id !== undefined && typeof call.id !== "string") return badValue(`${inner}.id`, "TYPE_STRING", call.id);
    out.functionCall = { name: call.name, args: (call.args as Json | undefined) ?? {}, ...(call.id ? { id: call.id } : {}) };
  } else if (kind === "functionResponse") {
    if (!isObject(value)) return badValue(inner, TYPE("FunctionResponse"), value);
    const response = fields(value, FUNCTION_RESPONSE_FIELDS, inner);
    if (typeof response === "string") return response;
    if (role !== "user") return rule(inner, 'a function response belongs to a "user" turn');
    if (response.name === undefined || response.name === "") return rule(`${inner}.name`, "Name cannot be empty.");
    if (typeof response.name !== "string") return badValue(`${inner}.name`, "TYPE_STRING", response.name);
    if (response.response === undefined) return rule(`${inner}.response`, "Required field is not set.");
    if (!isObject(response.response)) return badValue(`${inner}.response`, STRUCT, response.response);
    if (response.id !== undefined && typeof response.id !== "string") return badValue(`${inner}.id`, "TYPE_STRING", response.id);
    if (response.parts !== undefined && !Array.isArray(response.parts)) return badValue(`${inner}.parts`, TYPE("FunctionResponsePart"), response.parts);
    out.functionResponse = { name: response.name, ...(response.id ? { id: response.id } : {}) };
  } else if (kind === "executableCode") {
    if (!isObject(value)) return badValue(inner, TYPE("ExecutableCode"), value);
    const code = fields(value, EXECUTABLE_CODE_FIELDS, inner);
    if (typeof code === "string") return code;
    if (code.language !== undefined && !LANGUAGES.includes(code.language as string)) return badValue(`${inner}.language`, TYPE("ExecutableCode.Language"), code.language);
    if (code.code !== undefined && typeof code.code !== "string") return badValue(`${inner}.code`, "TYPE_STRING", code.code);
  } else if (kind === "codeExecutionResult") {
    if (!isObject(value)) return badValue(inner, TYPE("CodeExecutionResult"), value);
    const result = fields(value, CODE_RESULT_FIELDS, inner);
    if (typeof result === "string") return result;
    if (result.outcome !== undefined && !OUTCOMES.includes(result.outcome as string)) return badValue(`${inner}.outcome`, TYPE("CodeExecutionResult.Outcome"), result.outcome);
    if (result.output !== undefined && typeof result.output !== "string") return badValue(`${inner}.output`, "TYPE_STRING", result.output);
  } else if (!isObject(value)) {
    return badValue(inner, TYPE(kind.charAt(0).toUpperCase() + kind.slice(1)), value);
  }
  return out;
}

/** A content (`contents[i]` or `system_instruction`), checked and normalized. */
function checkContent(raw: unknown, at: string, system: boolean): Content | string {
  if (!isObject(raw)) return badValue(at, TYPE("Content"), raw);
  const content = fields(raw, CONTENT_FIELDS, at);
  if (typeof content === "string") return content;
  const role = content.role === undefined || content.role === "" ? "user" : content.role;
  if (!system && role !== "user" && role !== "model") return "Please use a valid role: user, model.";
  const list = content.parts === undefined ? [] : listOf(content.parts);
  if (!list) return badValue(`${at}.parts`, TYPE("Part"), content.parts);
  if (!list.length) return rule(`${at}.parts`, "contents.parts must not be empty.");
  const parts: Part[] = [];
  for (const [j, raw] of list.entries()) {
    const part = checkPart(raw, `${at}.parts[${j}]`, system ? "user" : (role as "user" | "model"));
    if (typeof part === "string") return part;
    parts.push(part);
  }
  return { role: system ? "user" : (role as "user" | "model"), parts };
}

/** The tools: their shapes and function declarations. */
function checkTools(raw: unknown): string | null {
  const tools = listOf(raw);
  if (!tools) return badValue("tools", TYPE("Tool"), raw);
  const names = new Set<string>();
  for (const [n, rawTool] of tools.entries()) {
    const at = `tools[${n}]`;
    if (!isObject(rawTool)) return badValue(at, TYPE("Tool"), rawTool);
    const tool = fields(rawTool, TOOL_FIELDS, at);
    if (typeof tool === "string") return tool;
    for (const [name, value] of Object.entries(tool)) {
      if (name !== "functionDeclarations" && !isObject(value)) return badValue(`${at}.${snake(name)}`, TYPE(name.charAt(0).toUpperCase() + name.slice(1)), value);
    }
    if (tool.functionDeclarations === undefined) continue;
    const declarations = listOf(tool.functionDeclarations);
    if (!declarations) return badValue(`${at}.function_declarations`, TYPE("FunctionDeclaration"), tool.functionDeclarations);
    for (const [m, rawDeclaration] of declarations.entries()) {
      const where = `${at}.function_declarations[${m}]`;
      if (!isObject(rawDeclaration)) return badValue(where, TYPE("FunctionDeclaration"), rawDeclaration);
      const declaration = fields(rawDeclaration, DECLARATION_FIELDS, where);
      if (typeof declaration === "string") return declaration;
      const { name, description, parameters, parametersJsonSchema } = declaration;
      if (typeof name !== "string" || !FUNCTION_NAME.test(name)) {
        return rule(
          `${where}.name`,
          "Invalid function name. Must start with a letter or an underscore. Must be alpha-numeric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.",
        );
      }
      if (names.has(name)) return rule(`${where}.name`, `Duplicate function declaration found: ${name}`);
      names.add(name);
      if (description !== undefined && typeof description !== "string") return badValue(`${where}.description`, "TYPE_STRING", description);
      if (parameters !== undefined && !isObject(parameters)) return badValue(`${where}.parameters`, TYPE("Schema"), parameters);
      if (parameters !== undefined && parametersJsonSchema !== undefined) {
        return rule(where, "parameters and parameters_json_schema cannot both be set.");
      }
    }
  }
  return null;
}

/** The checks of `generationConfig` and `toolConfig`. */
function checkConfig(body: Json): string | null {
  const config = body.generationConfig;
  if (config !== undefined) {
    if (!isObject(config)) return badValue("generation_config", TYPE("GenerationConfig"), config);
    for (const name of ["temperature", "topP", "topK", "maxOutputTokens", "candidateCount", "seed", "presencePenalty", "frequencyPenalty"]) {
      const value = config[name] ?? config[snake(name)];
      if (value !== undefined && value !== null && typeof value !== "number") {
        return badValue(`generation_config.${snake(name)}`, name === "temperature" || name.endsWith("Penalty") || name === "topP" ? "TYPE_FLOAT" : "TYPE_INT32", value);
      }
    }
    const thinking = config.thinkingConfig ?? config.thinking_config;
    if (thinking !== undefined && thinking !== null) {
      if (!isObject(thinking)) return badValue("generation_config.thinking_config", TYPE("ThinkingConfig"), thinking);
      const include = thinking.includeThoughts ?? thinking.include_thoughts;
      if (include !== undefined && typeof include !== "boolean") return badValue("generation_config.thinking_config.include_thoughts", "TYPE_BOOL", include);
      const budget = thinking.thinkingBudget ?? thinking.thinking_budget;
      if (budget !== undefined && !Number.isInteger(budget)) return badValue("generation_config.thinking_config.thinking_budget", "TYPE_INT32", budget);
      const level = thinking.thinkingLevel ?? thinking.thinking_level;
      if (level !== undefined && typeof level !== "string") return badValue("generation_config.thinking_config.thinking_level", TYPE("ThinkingConfig.ThinkingLevel"), level);
    }
  }
  if (body.toolConfig !== undefined && !isObject(body.toolConfig)) return badValue("tool_config", TYPE("ToolConfig"), body.toolConfig);
  return null;
}

/** Function calls and responses in pairs, turn by turn. */
function checkPairs(contents: Content[]): string | null {
  const callsOf = (content: Content | undefined) => (content?.role === "model" ? content.parts.flatMap((part) => (part.functionCall ? [part.functionCall] : [])) : []);
  const responsesOf = (content: Content | undefined) =>
    content?.role === "user" ? content.parts.flatMap((part) => (part.functionResponse ? [part.functionResponse] : [])) : [];
  for (const [i, content] of contents.entries()) {
    const calls = callsOf(content);
    if (calls.length) {
      const before = contents[i - 1];
      if (!before || before.role !== "user") return CALL_AFTER_USER;
      if (responsesOf(contents[i + 1]).length !== calls.length) return RESPONSE_COUNT;
    }
    const responses = responsesOf(content);
    if (!responses.length) continue;
    const asked = callsOf(contents[i - 1]);
    if (!asked.length) return RESPONSE_AFTER_CALL;
    if (asked.length !== responses.length) return RESPONSE_COUNT;
    for (const [j, response] of responses.entries()) {
      const match = asked.findIndex((call) => call.name === response.name && (response.id === undefined || call.id === undefined || call.id === response.id));
      if (match < 0) {
        const id = response.id ? ` (id ${response.id})` : "";
        return `Please ensure that every function response answers a function call of the function call turn: the function response \`${response.name}\`${id} (function response ${j + 1} of contents[${i}]) has no matching function call.`;
      }
      asked.splice(match, 1);
    }
  }
  return null;
}

/** What identifies a function call: its name, args and id. */
const callKey = (call: FunctionCall) => `${call.name} ${canonical(call.args)} ${call.id ?? ""}`;

interface IssuedCall {
  name: string;
  args: string;
  id?: string;
  signature: string;
}

/** Thought signatures: the current turn's issued calls come back with theirs; none is made up. */
function checkSignatures(contents: Content[], session: Session): string | null {
  let turnStart = 0;
  contents.forEach((content, i) => {
    if (content.role === "user" && content.parts.some((part) => !part.functionResponse)) turnStart = i + 1;
  });
  for (const [i, content] of contents.entries()) {
    if (content.role !== "model") continue;
    for (const part of content.parts) {
      const signature = part.thoughtSignature;
      const call = part.functionCall;
      const dummy = signature !== undefined && DUMMY_SIGNATURES.has(signature);
      if (signature !== undefined && !dummy) {
        // One this session issued, on the part it was issued for (a text's on any part that is not a call).
        const owner = session.signatures.get(signature);
        if (owner === undefined || owner !== (call ? callKey(call) : null)) return "Corrupted thought signature.";
      }
      if (!call || i < turnStart) continue;
      const args = canonical(call.args);
      const issued = session.issued.find((c) => c.name === call.name && c.args === args && (c.id === undefined || c.id === call.id));
      if (!issued) continue;
      if (signature === undefined) return MISSING_SIGNATURE.replace("%NAME%", call.name).replace("%N%", String(i + 1));
      if (!dummy && signature !== issued.signature) return "Corrupted thought signature.";
    }
  }
  return null;
}

/** The first problem of a generateContent request in the real API's words (or close), or null; and its contents. */
function checkRequest(raw: Json, session: Session): { problem: string } | { contents: Content[]; body: Json } {
  const body = fields(raw, REQUEST_FIELDS, "");
  if (typeof body === "string") return { problem: body };
  const list = body.contents === undefined ? [] : listOf(body.contents);
  if (!list) return { problem: badValue("contents", TYPE("Content"), body.contents) };
  if (!list.length) return { problem: rule("contents", "contents is not specified") };
  const contents: Content[] = [];
  for (const [i, rawContent] of list.entries()) {
    const content = checkContent(rawContent, `contents[${i}]`, false);
    if (typeof content === "string") return { problem: content };
    contents.push(content);
  }
  if (body.systemInstruction !== undefined) {
    const system = checkContent(body.systemInstruction, "system_instruction", true);
    if (typeof system === "string") return { problem: system };
  }
  const problem =
    (body.tools !== undefined ? checkTools(body.tools) : null) ?? checkConfig(body) ?? checkPairs(contents) ?? checkSignatures(contents, session);
  return problem ? { problem } : { contents, body };
}

/** Whether the request's tools hold the code execution tool. */
function hasCodeExecution(body: Json): boolean {
  return (listOf(body.tools) ?? []).some((tool) => isObject(tool) && isObject(tool.codeExecution ?? tool.code_execution));
}

/** The code of the first ```python block in the text of the last user turn that has text. */
function fencedPython(contents: Content[]): string | null {
  const withText = contents.filter((content) => content.role === "user" && content.parts.some((part) => part.text !== undefined));
  const last = withText[withText.length - 1];
  if (!last) return null;
  const text = last.parts.flatMap((part) => (part.text !== undefined && !part.thought ? [part.text] : [])).join("\n");
  // The block ends at a line that is only a fence, so code that itself mentions ``` stays whole.
  const match = /```(?:python|py)[ \t]*\r?\n([\s\S]*?)\r?\n```[ \t]*(?:\r?\n|$)/.exec(text);
  return match ? match[1] : null;
}

/** The files a run gets: every inlineData part of the user turns, named as the header comment says. */
function inputFiles(contents: Content[]): { name: string; data: Buffer }[] {
  const blobs = contents.filter((content) => content.role === "user").flatMap((content) => content.parts.flatMap((part) => (part.inlineData ? [part.inlineData] : [])));
  return blobs.map((blob, n) => {
    const given = (blob.displayName ?? "").split(/[/\\]/).pop() ?? "";
    const name = given && given !== "." && given !== ".." ? given : `input_file_${n}${EXTENSIONS[blob.mimeType.toLowerCase().split(";")[0].trim()] ?? ""}`;
    return { name, data: Buffer.from(blob.data.replace(/-/g, "+").replace(/_/g, "/"), "base64") };
  });
}

interface Session {
  queue: Reply[];
  requests: RecordedRequest[];
  cors: boolean;
  models: Required<ModelInfo>[];
  /** Function calls this session answered with a thought signature. */
  issued: IssuedCall[];
  /** Every thought signature this session gave out, with the call it belongs to (`callKey`; null: a text's). */
  signatures: Map<string, string | null>;
}

function modelEntry(model: string | ModelInfo): Required<ModelInfo> {
  const info = typeof model === "string" ? { name: model } : model;
  const id = modelId(info.name);
  return { name: id, displayName: info.displayName ?? displayNameOf(id), supportedGenerationMethods: info.supportedGenerationMethods ?? CHAT_METHODS };
}

/** A model as `GET /models` lists it. */
function modelJson(model: Required<ModelInfo>): Json {
  const chat = model.supportedGenerationMethods.includes("generateContent");
  const version = /-(\d+(?:\.\d+)?)(?:-|$)/.exec(model.name)?.[1] ?? "001";
  return {
    name: `models/${model.name}`,
    version,
    displayName: model.displayName,
    description: `${model.displayName} (a stand-in model of the test server)`,
    inputTokenLimit: chat ? 1_048_576 : 2048,
    outputTokenLimit: chat ? 65_536 : 1,
    supportedGenerationMethods: model.supportedGenerationMethods,
    ...(chat ? { temperature: 1, topP: 0.95, topK: 64, maxTemperature: 2, thinking: true } : {}),
  };
}

interface RunResult {
  outcome: "OUTCOME_OK" | "OUTCOME_FAILED" | "OUTCOME_DEADLINE_EXCEEDED";
  output: string;
  images: Buffer[];
}

export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const port = options.port ?? 0;
  const token = options.token ?? randomBytes(16).toString("hex");
  if (!/^[\w-]{16,}$/.test(token)) throw new Error("startFakeGemini: the token must be at least 16 of A-Z a-z 0-9 _ -");
  const tokenBytes = Buffer.from(token, "utf8");
  const execTimeoutMs = options.execTimeoutMs ?? 30_000;
  const maxRequestBytes = options.maxRequestBytes ?? 100 * MB;

  const sessions = new Map<string, Session>();
  const sessionOf = (name: string): Session => {
    let session = sessions.get(name);
    if (!session) {
      session = { queue: [], requests: [], cors: true, models: DEFAULT_MODELS.map(modelEntry), issued: [], signatures: new Map() };
      sessions.set(name, session);
    }
    return session;
  };
  /** Every run's folder and process, so that close() ends them all. */
  const tempDirs = new Set<string>();
  const running = new Set<() => void>();

  /** Runs Python in a fresh folder with the given files; its outcome, output and new PNG files. */
  async function run(code: string, files: { name: string; data: Buffer }[], timeoutMs: number): Promise<RunResult> {
    const root = await mkdtemp(join(tmpdir(), "kiln-gemini-run-"));
    tempDirs.add(root);
    try {
      // The code's working folder, and a temp folder beside it (so that listing the working folder shows only files).
      const dir = join(root, "work");
      await mkdir(dir);
      await mkdir(join(root, "tmp"));
      for (const file of files) await writeFile(join(dir, file.name), file.data);
      const before = await listFiles(dir);
      const env = sandboxEnv(dir, { TMPDIR: join(root, "tmp"), PYTHONUNBUFFERED: "1" });
      const { stdout, stderr, exitCode, timedOut } = await runProcess("python3", ["-c", code], { cwd: dir, env, timeoutMs, running });
      const images: Buffer[] = [];
      for (const [path, now] of await listFiles(dir)) {
        const then = before.get(path);
        if (!path.toLowerCase().endsWith(".png") || (then && then.mtime === now.mtime && then.size === now.size)) continue;
        images.push(await readFile(path));
      }
      if (timedOut) return { outcome: "OUTCOME_DEADLINE_EXCEEDED", output: stdout + stderr, images };
      if (exitCode === 0) return { outcome: "OUTCOME_OK", output: stdout, images };
      return { outcome: "OUTCOME_FAILED", output: stdout + stderr, images };
    } finally {
      tempDirs.delete(root);
      await rm(root, { recursive: true, force: true });
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, "INTERNAL", String(error));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = routedUrl(req.url ?? "/", tokenBytes); // the path without the token, for the routes below
    if (!url) {
      // Not this test run's client: answer before reading the body, run nothing, record nothing.
      req.resume();
      corsHeaders(res);
      res.setHeader("connection", "close");
      return sendError(res, 404, "NOT_FOUND", "Not found: this server answers only under its test run's token (/<token>/…).");
    }
    const path = url.pathname.replace(/\/+$/, "");

    if (path.startsWith("/__kiln/")) {
      corsHeaders(res);
      if (req.method === "OPTIONS") return preflight(req, res);
      return control(req, res, `${req.method} ${path}`, url);
    }

    const match = /^\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!match || !SESSION.test(match[1]) || !VERSIONS.includes(match[2])) {
      req.resume();
      corsHeaders(res);
      if (req.method === "OPTIONS") return preflight(req, res);
      return sendError(res, 404, "NOT_FOUND", `Invalid URL (${req.method} ${url.pathname}): a session's routes are /<session>/{${VERSIONS.join(",")}}/…`);
    }
    const session = sessionOf(match[1]);
    const version = match[2];
    const rest = match[3] ?? "";
    if (session.cors) corsHeaders(res);
    if (req.method === "OPTIONS") {
      req.resume();
      return session.cors ? preflight(req, res) : void res.writeHead(204).end();
    }

    const generate = /^\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(rest);
    let raw: Buffer | null = Buffer.alloc(0);
    if (req.method === "POST") raw = await readBody(req, maxRequestBytes);
    else req.resume();
    const text = raw ? raw.toString("utf8") : "";
    const keyHeader = header(req, "x-goog-api-key");
    if (generate && generate[2] !== "countTokens" && req.method === "POST") {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = raw ? text : "(too large: not kept)";
      }
      session.requests.push({ url: url.pathname.slice(match[1].length + 1) + url.search, body, headers: { "x-goog-api-key": keyHeader } });
    }

    const key = keyHeader || url.searchParams.get("key");
    if (!key) {
      return sendError(
        res,
        403,
        "PERMISSION_DENIED",
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    }
    if (key === "bad-key") {
      const message = "API key not valid. Please pass a valid API key.";
      return sendError(res, 400, "INVALID_ARGUMENT", message, [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } },
        { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message },
      ]);
    }

    if (req.method === "GET" && rest === "/models") {
      const all = session.models.map(modelJson);
      const pageSize = Math.min(1000, Math.max(1, Number(url.searchParams.get("pageSize")) || 50));
      const tokenParam = url.searchParams.get("pageToken");
      const start = tokenParam ? Number(Buffer.from(tokenParam, "base64url").toString("utf8").replace(/^offset:/, "")) : 0;
      if (!Number.isInteger(start) || start < 0) return sendError(res, 400, "INVALID_ARGUMENT", "Invalid page token.");
      const models = all.slice(start, start + pageSize);
      const next = start + pageSize < all.length ? Buffer.from(`offset:${start + pageSize}`).toString("base64url") : undefined;
      return sendJson(res, 200, { models, ...(next ? { nextPageToken: next } : {}) });
    }
    const getModel = /^\/models\/([^/:]+)$/.exec(rest);
    if (req.method === "GET" && getModel) {
      const id = decodeURIComponent(getModel[1]);
      const model = session.models.find((m) => m.name === id);
      if (!model) return sendError(res, 404, "NOT_FOUND", `models/${id} is not found for API version ${version}, or is not supported for get.`);
      return sendJson(res, 200, modelJson(model));
    }
    if (!generate || req.method !== "POST") return sendError(res, 404, "NOT_FOUND", `Method not found: ${req.method} /${version}${rest}`);

    const id = decodeURIComponent(generate[1]);
    const method = generate[2];
    const model = session.models.find((m) => m.name === id);
    const wanted = method === "countTokens" ? "countTokens" : "generateContent";
    if (!model || !model.supportedGenerationMethods.includes(wanted)) {
      return sendError(
        res,
        404,
        "NOT_FOUND",
        `models/${id} is not found for API version ${version}, or is not supported for ${wanted}. Call ListModels to see the list of available models and their supported methods.`,
      );
    }
    if (!raw) return sendError(res, 400, "INVALID_ARGUMENT", `Request payload size exceeds the limit: ${maxRequestBytes} bytes.`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return sendError(res, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unexpected token.");
    }
    if (!isObject(body)) return sendError(res, 400, "INVALID_ARGUMENT", `Invalid JSON payload received. Expected an object, got ${JSON.stringify(body)?.slice(0, 40)}.`);
    if (method === "countTokens") {
      const request = isObject(body.generateContentRequest) ? body.generateContentRequest : body;
      return sendJson(res, 200, { totalTokens: tokens(JSON.stringify([request.contents, request.systemInstruction, request.tools])) });
    }
    const checked = checkRequest(body, session);
    if ("problem" in checked) return sendError(res, 400, "INVALID_ARGUMENT", checked.problem);

    const answer = { stream: method === "streamGenerateContent", sse: url.searchParams.get("alt") === "sse", model: id, body: checked.body };
    const next = session.queue[0];
    if (next && "execute" in next) {
      if (!hasCodeExecution(checked.body)) {
        return sendError(res, 400, "INVALID_ARGUMENT", "The scripted reply executes code, but the request's tools hold no codeExecution tool (this server's own check; the reply stays queued).");
      }
      const code = next.execute.code ?? fencedPython(checked.contents);
      if (code === null) {
        return sendError(res, 400, "INVALID_ARGUMENT", "The scripted reply executes code, but the last user turn with text has no ```python block (this server's own check; the reply stays queued).");
      }
      session.queue.shift();
      const result = await run(code, inputFiles(checked.contents), next.execute.timeoutMs ?? execTimeoutMs);
      const parts: Json[] = [
        { executableCode: { language: "PYTHON", code } },
        { codeExecutionResult: { outcome: result.outcome, ...(result.output ? { output: result.output } : {}) } },
        ...result.images.map((image) => ({ inlineData: { mimeType: "image/png", data: image.toString("base64") } })),
        { text: next.execute.text ?? "Done." },
      ];
      return sendAnswer(req, res, answer, parts, { finishReason: "STOP", delayMs: next.delayMs, dropAfterChunks: next.dropAfterChunks });
    }

    const reply: Reply = session.queue.shift() ?? { parts: [{ text: "(no scripted reply)" }] };
    if ("status" in reply) {
      const error = { code: reply.error.code ?? reply.status, message: reply.error.message, status: reply.error.status, ...(reply.error.details ? { details: reply.error.details } : {}) };
      return sendJson(res, reply.status, { error }, reply.headers);
    }
    if (!("parts" in reply)) return sendError(res, 500, "INTERNAL", "execute reply out of turn"); // answered above
    const parts: Json[] = reply.parts.map((part) =>
      "functionCall" in part
        ? { functionCall: { ...(part.functionCall.id ? { id: part.functionCall.id } : {}), name: part.functionCall.name, args: part.functionCall.args ?? {} } }
        : { text: part.text, ...(part.thought ? { thought: true } : {}) },
    );
    if (reply.signature && parts.length) {
      const signature = randomBytes(48).toString("base64");
      const first = parts.find((part) => part.functionCall);
      if (first) {
        const call = first.functionCall as FunctionCall;
        session.issued.push({ name: call.name, args: canonical(call.args), ...(call.id ? { id: call.id } : {}), signature });
        session.signatures.set(signature, callKey(call));
        first.thoughtSignature = signature;
      } else {
        session.signatures.set(signature, null);
        parts[parts.length - 1].thoughtSignature = signature;
      }
    }
    await sendAnswer(req, res, answer, parts, { finishReason: reply.finishReason ?? "STOP", delayMs: reply.delayMs, dropAfterChunks: reply.dropAfterChunks });
  }

  async function control(req: IncomingMessage, res: ServerResponse, route: string, url: URL): Promise<void> {
    const raw = ((await readBody(req, 64 * MB)) ?? Buffer.alloc(0)).toString("utf8");
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      return sendError(res, 400, "INVALID_ARGUMENT", "The request body is not valid JSON.");
    }
    const name = req.method === "GET" ? url.searchParams.get("session") : isObject(body) ? body.session : undefined;
    const named = typeof name === "string" && SESSION.test(name) && name !== "__kiln";
    if (!named) return sendError(res, 400, "INVALID_ARGUMENT", "expected a session: [A-Za-z0-9_-]+");

    if (route === "POST /__kiln/script") {
      if (!isObject(body) || !Array.isArray(body.replies)) return sendError(res, 400, "INVALID_ARGUMENT", "expected {session: string, replies: Reply[]}");
      const session = sessionOf(name);
      session.queue.push(...(body.replies as Reply[]));
      return sendJson(res, 200, { queued: session.queue.length });
    }
    if (route === "GET /__kiln/requests") return sendJson(res, 200, sessions.get(name)?.requests ?? []);
    if (route === "POST /__kiln/configure") {
      const config = body as Json;
      if (config.cors !== undefined && typeof config.cors !== "boolean") return sendError(res, 400, "INVALID_ARGUMENT", "cors: expected a boolean");
      const models = config.models;
      const validModel = (m: unknown) =>
        (typeof m === "string" && m !== "") ||
        (isObject(m) &&
          typeof m.name === "string" &&
          m.name !== "" &&
          (m.displayName === undefined || typeof m.displayName === "string") &&
          (m.supportedGenerationMethods === undefined || (Array.isArray(m.supportedGenerationMethods) && m.supportedGenerationMethods.every((x) => typeof x === "string"))));
      if (models !== undefined && !(Array.isArray(models) && models.every(validModel))) {
        return sendError(res, 400, "INVALID_ARGUMENT", "models: expected a list of model ids or {name, displayName?, supportedGenerationMethods?}");
      }
      const session = sessionOf(name);
      if (typeof config.cors === "boolean") session.cors = config.cors;
      if (Array.isArray(models)) session.models = (models as (string | ModelInfo)[]).map(modelEntry);
      return sendJson(res, 200, { session: name, cors: session.cors, models: session.models });
    }
    if (route === "POST /__kiln/reset") {
      sessions.delete(name);
      return sendJson(res, 200, { ok: true });
    }
    return sendError(res, 404, "NOT_FOUND", `Invalid URL (${route})`);
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
    await Promise.all([...tempDirs].map((dir) => rm(dir, { recursive: true, force: true })));
  };
  return { url, token, close };
}

interface Answer {
  stream: boolean;
  sse: boolean;
  model: string;
  body: Json;
}
interface AnswerOptions {
  finishReason: string;
  delayMs?: number;
  dropAfterChunks?: number;
}

/** Answers one generation: SSE chunks, a JSON array of chunks, or one JSON response. */
async function sendAnswer(req: IncomingMessage, res: ServerResponse, answer: Answer, parts: Json[], options: AnswerOptions): Promise<void> {
  const { finishReason, delayMs, dropAfterChunks } = options;
  const responseId = randomBytes(15).toString("base64url");
  const promptTokenCount = tokens(JSON.stringify([answer.body.contents, answer.body.systemInstruction, answer.body.tools]));
  const thoughts = parts.filter((part) => part.thought === true);
  const thoughtsTokenCount = thoughts.length ? tokens(thoughts.map((part) => String(part.text)).join("")) : 0;
  const candidatesTokenCount = tokens(JSON.stringify(parts.filter((part) => part.thought !== true)));
  const usageMetadata = {
    promptTokenCount,
    candidatesTokenCount,
    totalTokenCount: promptTokenCount + candidatesTokenCount + thoughtsTokenCount,
    ...(thoughtsTokenCount ? { thoughtsTokenCount } : {}),
  };
  const response = (chunkParts: Json[], last: boolean) => ({
    candidates: [{ content: { role: "model", parts: chunkParts }, ...(last ? { finishReason } : {}), index: 0 }],
    usageMetadata: last ? usageMetadata : { promptTokenCount, totalTokenCount: promptTokenCount },
    modelVersion: answer.model,
    responseId,
  });

  if (!answer.stream) {
    if (delayMs) await sleep(delayMs);
    if (dropAfterChunks !== undefined) return void req.socket.destroy();
    return sendJson(res, 200, response(parts, true));
  }

  // The chunks: text in pieces (a text's signature in a last chunk of its own, with an empty text), the rest whole.
  const chunks: Json[][] = [];
  for (const part of parts) {
    if (typeof part.text !== "string") {
      chunks.push([part]);
      continue;
    }
    for (const text of pieces(part.text)) chunks.push([{ text, ...(part.thought ? { thought: true } : {}) }]);
    if (part.thoughtSignature) chunks.push([{ text: "", thoughtSignature: part.thoughtSignature }]);
  }
  if (!chunks.length) chunks.push([]);

  res.writeHead(200, answer.sse ? { "content-type": "text/event-stream", "cache-control": "no-cache" } : { "content-type": "application/json; charset=UTF-8" });
  let closed = false;
  res.on("close", () => (closed = true));
  const write = (data: string) => new Promise((resolve) => res.write(data, resolve));
  if (!answer.sse) await write("[");
  for (const [n, chunk] of chunks.entries()) {
    if (closed) return;
    if (dropAfterChunks !== undefined && n >= dropAfterChunks) return void req.socket.destroy();
    const json = JSON.stringify(response(chunk, n === chunks.length - 1));
    await write(answer.sse ? `data: ${json}\r\n\r\n` : `${n ? ",\r\n" : ""}${json}`);
    if (delayMs && n < chunks.length - 1) await sleep(delayMs);
  }
  // Every chunk went out: a drop now loses only the end of the response.
  if (dropAfterChunks !== undefined) return void req.socket.destroy();
  if (!answer.sse) await write("]");
  res.end();
}


/** The CORS headers of an allowed origin, and the resource policy a cross-origin isolated page needs. */
function corsHeaders(res: ServerResponse): void {
  res.setHeader("access-control-allow-origin", "*");
  res.setHeader("access-control-expose-headers", "retry-after, x-goog-request-id");
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

/** The whole body, or null once it is over the limit (the rest is read and dropped). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
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
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=UTF-8" });
  res.end(JSON.stringify(data));
}

/** A Google API error: `{error: {code, message, status, details?}}`. */
function sendError(res: ServerResponse, code: number, status: string, message: string, details?: unknown[]): void {
  sendJson(res, code, { error: { code, message, status, ...(details ? { details } : {}) } });
}

// Run directly (under any TypeScript loader): serve on a free port, or PORT; the printed URL holds the token.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startFakeGemini({ port: Number(process.env.PORT) || 0 }).then(({ url }) => console.log(`Fake Gemini API on ${url} (an SDK base URL is ${url}/<session>)`));
}
