import Anthropic, { toFile, type APIError } from "@anthropic-ai/sdk";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type ExecErrorCode, type RecordedFileRequest, type RecordedRequest, type Reply } from "./server.ts";

/** The base URL: `http://127.0.0.1:<port>/<token>`. */
let url = "";
let token = "";
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ url, token, close } = await startFakeAnthropic()); // a free port and a fresh token
});
afterAll(() => close());

let keyCount = 0;
/** A fresh key, so each test has a queue and a request log of its own. */
const freshKey = () => `test-key-${++keyCount}`;
const client = (apiKey: string) => new Anthropic({ apiKey, baseURL: url, maxRetries: 0 });

async function script(key: string, replies: Reply[]): Promise<void> {
  const res = await fetch(`${url}/__kiln/script`, { method: "POST", body: JSON.stringify({ key, replies }) });
  expect(res.status).toBe(200);
}

async function requests(key: string): Promise<RecordedRequest[]> {
  return (await fetch(`${url}/__kiln/requests?key=${encodeURIComponent(key)}`)).json() as Promise<RecordedRequest[]>;
}

const hello = { model: "claude-haiku-4-5", max_tokens: 1024, messages: [{ role: "user" as const, content: "Hello" }] };

describe("fake Anthropic API", () => {
  it("streams a scripted text reply", async () => {
    const key = freshKey();
    await script(key, [{ content: [{ type: "text", text: "Hello there, from the fake API!" }] }]);
    const stream = client(key).messages.stream(hello);
    const deltas: string[] = [];
    stream.on("text", (text) => deltas.push(text));
    const message = await stream.finalMessage();
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: "text", text: "Hello there, from the fake API!" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(1);
    expect(deltas.length).toBeGreaterThan(1);
  });

  it("streams tool_use input as input_json_delta chunks, the first one empty", async () => {
    const key = freshKey();
    const input = { code: "print(2 + 2)", note: "ünïcode ✓" };
    await script(key, [{ content: [{ type: "text", text: "Running it." }, { type: "tool_use", name: "run_python", input }] }]);
    const events = await client(key).messages.create({ ...hello, stream: true });
    const types: string[] = [];
    const partials: string[] = [];
    for await (const event of events) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") partials.push(event.delta.partial_json);
    }
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(partials[0]).toBe("");
    expect(partials.length).toBeGreaterThan(2);
    expect(JSON.parse(partials.join(""))).toEqual(input);

    await script(key, [{ content: [{ type: "tool_use", name: "run_python", input }] }]);
    const message = await client(key).messages.stream(hello).finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content[0]).toMatchObject({ type: "tool_use", name: "run_python", input });
    expect((message.content[0] as Anthropic.ToolUseBlock).id).toMatch(/^toolu_/);
  });

  it("answers without a stream, and with a default reply when nothing is scripted", async () => {
    const message = await client(freshKey()).messages.create(hello);
    expect(message.content).toEqual([{ type: "text", text: "(no scripted reply)" }]);
    expect(message.stop_reason).toBe("end_turn");
  });

  it("rejects a bad key with a 401 authentication_error", async () => {
    const failure = await client("bad-key").messages.create(hello).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((failure as APIError).status).toBe(401);
    expect((failure as APIError).requestID).toMatch(/^req_/);
    await expect(client("bad-key").models.list()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it("lists models", async () => {
    const page = await client(freshKey()).models.list();
    expect(page.data.map((model) => model.id)).toEqual(["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-4-5"]);
  });

  it("refuses a tool_result without a matching tool_use, and an unanswered tool_use", async () => {
    const api = client(freshKey());
    const stray = api.messages.create({
      ...hello,
      messages: [
        { role: "user", content: "Run it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "run_python", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_b", content: "4" }] },
      ],
    });
    await expect(stray).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(stray).rejects.toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: expect.stringContaining("toolu_b") });

    const unanswered = api.messages.create({
      ...hello,
      messages: [
        { role: "user", content: "Run it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "run_python", input: {} }] },
        { role: "user", content: "and?" },
      ],
    });
    await expect(unanswered).rejects.toMatchObject({ status: 400, apiMessage: expect.stringContaining("toolu_a") });
    const badTool = api.messages.create({ ...hello, tools: [{ name: "x", input_schema: { type: "array" } } as unknown as Anthropic.Tool] });
    await expect(badTool).rejects.toMatchObject({ status: 400 });
    const noModel = api.messages.create({ ...hello, model: "" });
    await expect(noModel).rejects.toMatchObject({ status: 400 });
  });

  it("plays scripted HTTP errors and mid-stream errors", async () => {
    const key = freshKey();
    await script(key, [
      { status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
      { status: 429, error: { type: "rate_limit_error", message: "Slow down" }, headers: { "retry-after": "0" } },
      { content: [{ type: "text", text: "partial" }, { type: "text", text: "never" }], errorAfterBlocks: 1 },
      { content: [{ type: "text", text: "partial" }, { type: "text", text: "never" }], dropAfterBlocks: 1, delayMs: 5 },
    ]);
    await expect(client(key).messages.create(hello)).rejects.toMatchObject({ status: 529, type: "overloaded_error" });
    const limited = await client(key).messages.create(hello).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as APIError).headers?.get("retry-after")).toBe("0");
    const stream = client(key).messages.stream(hello);
    await expect(stream.finalMessage()).rejects.toMatchObject({ type: "overloaded_error" });
    const dropped = client(key).messages.stream(hello);
    const texts: string[] = [];
    dropped.on("text", (text) => texts.push(text));
    const failure = await dropped.finalMessage().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(texts.join("")).toBe("partial");
  });

  it("records the requests of a key, and resets them", async () => {
    const key = freshKey();
    await client(key).messages.create(hello);
    await client(key).messages.create({ ...hello, max_tokens: 5 });
    const seen = await requests(key);
    expect(seen.map((request) => request.body)).toEqual([hello, { ...hello, max_tokens: 5 }]);
    expect(seen[0].headers["anthropic-version"]).toBeTruthy();
    expect(seen[0].headers["x-api-key"] ?? seen[0].headers.authorization).toContain(key);
    expect(await requests(freshKey())).toEqual([]);
    await fetch(`${url}/__kiln/reset`, { method: "POST", body: JSON.stringify({ key }) });
    expect(await requests(key)).toEqual([]);
  });

  it("answers CORS preflights", async () => {
    const res = await fetch(`${url}/v1/messages`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:4173", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key, content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE, OPTIONS");
    expect(res.headers.get("access-control-allow-headers")).toBe("x-api-key, content-type");
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    const models = await fetch(`${url}/v1/models`, { headers: { "x-api-key": freshKey() } });
    expect(models.headers.get("access-control-expose-headers")).toBe("request-id, retry-after");
    expect(models.headers.get("request-id")).toMatch(/^req_/);
  });
});

type Content = Anthropic.ContentBlock;
type ExecResult = Anthropic.BashCodeExecutionResultBlock;

/** A request that offers the code execution tool and asks to run `code` in a fenced block. */
function execParams(code: string, extra: { version?: string; container?: string; uploads?: string[]; language?: string } = {}) {
  const version = extra.version ?? "code_execution_20250825";
  const language = extra.language ?? (version === "code_execution_20250522" ? "python" : "bash");
  const text = `Please run this:\n\n\`\`\`${language}\n${code}\n\`\`\`\n`;
  const uploads = (extra.uploads ?? []).map((file_id) => ({ type: "container_upload" as const, file_id }));
  return {
    model: "claude-haiku-4-5",
    max_tokens: 1024,
    tools: [{ type: version, name: "code_execution" } as Anthropic.ToolUnion],
    messages: [{ role: "user" as const, content: [{ type: "text" as const, text }, ...uploads] }],
    ...(extra.container ? { container: extra.container } : {}),
  };
}

/** Streams one request and returns its events and the message they add up to. */
async function streamed(api: Anthropic, params: ReturnType<typeof execParams>) {
  const events: Anthropic.RawMessageStreamEvent[] = [];
  const stream = api.messages.stream(params);
  stream.on("streamEvent", (event) => events.push(event));
  const message = await stream.finalMessage();
  return { events, message };
}

const resultOf = (message: Anthropic.Message) => {
  const block = message.content.find((b) => b.type === "bash_code_execution_tool_result");
  if (!block) throw new Error(`no result block in ${JSON.stringify(message.content)}`);
  return block.content;
};
const okResultOf = (message: Anthropic.Message) => resultOf(message) as ExecResult;

describe("fake Anthropic API: code execution", () => {
  it("streams a bash run: server_tool_use with its input in pieces, the whole result, text, then the container", async () => {
    const key = freshKey();
    await script(key, [{ execute: { text: "It printed a greeting." } }]);
    const { events, message } = await streamed(client(key), execParams('echo "hello from $(basename $PWD)"; echo oops >&2; exit 3'));
    const summary = events.map((event) =>
      event.type === "content_block_start" ? `start:${event.content_block.type}` : event.type === "content_block_delta" ? `delta:${event.delta.type}` : event.type,
    );
    const deduped = summary.filter((type, n) => type !== summary[n - 1]);
    expect(deduped).toEqual([
      "message_start",
      "start:server_tool_use",
      "delta:input_json_delta",
      "content_block_stop",
      "start:bash_code_execution_tool_result",
      "content_block_stop",
      "start:text",
      "delta:text_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const start = events.find((event) => event.type === "content_block_start" && event.content_block.type === "server_tool_use");
    expect(start).toMatchObject({ index: 0, content_block: { input: {}, name: "bash_code_execution" } });
    const partials = events.flatMap((event) => (event.type === "content_block_delta" && event.delta.type === "input_json_delta" ? [event.delta.partial_json] : []));
    expect(partials.length).toBeGreaterThan(2);
    const command = 'echo "hello from $(basename $PWD)"; echo oops >&2; exit 3';
    expect(JSON.parse(partials.join(""))).toEqual({ command });

    const [toolUse, result, text] = message.content as [Anthropic.ServerToolUseBlock, Anthropic.BashCodeExecutionToolResultBlock, Anthropic.TextBlock];
    expect(toolUse).toMatchObject({ type: "server_tool_use", name: "bash_code_execution", input: { command } });
    expect(toolUse.id).toMatch(/^srvtoolu_/);
    expect(result.tool_use_id).toBe(toolUse.id);
    expect(result.content).toEqual({ type: "bash_code_execution_result", stdout: expect.stringMatching(/^hello from kiln-container-/), stderr: "oops\n", return_code: 3, content: [] });
    expect(text).toMatchObject({ type: "text", text: "It printed a greeting." });
    expect(message.stop_reason).toBe("end_turn");
    const delta = events.find((event) => event.type === "message_delta");
    expect(delta?.delta.container).toMatchObject({ id: expect.stringMatching(/^container_/), skills: null });
    expect(Date.parse(message.container?.expires_at ?? "") - Date.now()).toBeGreaterThan(29 * 60_000);
  });

  it("keeps a container's files between runs, reports new files, and refuses an expired container", async () => {
    const key = freshKey();
    const api = client(key);
    await script(key, [{ execute: {} }, { execute: {} }, { execute: {} }]);
    const first = await streamed(api, execParams('echo "state from run 1" > notes.txt; echo "$HOME|$INPUT_DIR|$OUTPUT_DIR"'));
    const container = first.message.container?.id ?? "";
    const [home, inputs, outputs] = okResultOf(first.message).stdout.trim().split("|");
    expect(inputs).toBe(`${home}/inputs`);
    expect(outputs).toBe(`${home}/outputs`);
    expect(okResultOf(first.message).content).toEqual([{ type: "bash_code_execution_output", file_id: expect.stringMatching(/^file_/) }]);

    // The same container, without a stream: the message carries it at the top level.
    const second = await api.messages.create(execParams("cat notes.txt; pwd", { container }));
    expect(okResultOf(second).stdout).toBe(`state from run 1\n${home}\n`);
    expect(okResultOf(second).content).toEqual([]); // nothing new or changed
    expect(second.container).toMatchObject({ id: container, skills: null });

    // A fresh container when none is given.
    const third = await api.messages.create(execParams("ls notes.txt 2>&1 || true"));
    expect(third.container?.id).not.toBe(container);
    expect(okResultOf(third).stdout).toContain("No such file");

    const expire = await fetch(`${url}/__kiln/expire-container`, { method: "POST", body: JSON.stringify({ id: container }) });
    expect(expire.status).toBe(200);
    await script(key, [{ execute: {} }]);
    const expired = api.messages.create(execParams("cat notes.txt", { container }));
    await expect(expired).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(expired).rejects.toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: `container ${container} has expired` });
    const unknown = api.messages.create(execParams("true", { container: "container_nope" }));
    await expect(unknown).rejects.toMatchObject({ status: 400, apiMessage: "container container_nope not found" });
    // The refused requests did not use up the scripted reply.
    expect(okResultOf(await api.messages.create(execParams("echo fresh"))).stdout).toBe("fresh\n");
  });

  it("copies uploads into $INPUT_DIR and makes the files a run writes downloadable, but not the uploads", async () => {
    const key = freshKey();
    const api = client(key);
    const csv = "name,score\nada,3\nbob,4\n";
    const upload = await api.files.upload({ file: await toFile(Buffer.from(csv), "scores.csv") });
    expect(upload).toMatchObject({ id: expect.stringMatching(/^file_/), type: "file", filename: "scores.csv", mime_type: "text/csv", size_bytes: csv.length, downloadable: false });
    expect(Date.parse(upload.created_at)).toBeGreaterThan(0);

    await script(key, [{ execute: { text: "Summed the scores." } }]);
    const command = 'ls "$INPUT_DIR"; tail -n +2 "$INPUT_DIR/scores.csv" | cut -d, -f2 | paste -sd+ | bc > "$OUTPUT_DIR/total.txt"; printf "\\x00\\xff" > raw.bin';
    const message = await api.messages.create(execParams(command, { uploads: [upload.id] }));
    const result = okResultOf(message);
    expect(result.stdout).toBe("scores.csv\n");
    expect(result.return_code).toBe(0);
    expect(result.content).toHaveLength(2);
    const files = await Promise.all(result.content.map((output) => api.files.retrieveMetadata(output.file_id)));
    const total = files.find((file) => file.filename === "total.txt");
    const raw = files.find((file) => file.filename === "raw.bin");
    expect(total).toMatchObject({ mime_type: "text/plain", size_bytes: 2, downloadable: true });
    expect(raw).toMatchObject({ mime_type: "application/octet-stream", downloadable: true });
    expect(await (await api.files.download(total?.id ?? "")).text()).toBe("7\n");
    expect(Buffer.from(await (await api.files.download(raw?.id ?? "")).arrayBuffer())).toEqual(Buffer.from([0, 255]));

    const refused = await api.files.download(upload.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.FileNotDownloadableError);
    expect(refused).toMatchObject({ status: 400, type: "invalid_request_error", errorCode: "file_not_downloadable" });

    const listed = await api.files.list();
    expect(listed.data.map((file) => file.id).sort()).toEqual([upload.id, ...result.content.map((output) => output.file_id)].sort());
    expect((await client(freshKey()).files.list()).data).toEqual([]); // files belong to their key
    await expect(client(freshKey()).files.retrieveMetadata(upload.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);

    expect(await api.files.delete(upload.id)).toEqual({ id: upload.id, type: "file_deleted" });
    await expect(api.files.retrieveMetadata(upload.id)).rejects.toMatchObject({ status: 404, type: "not_found_error" });
    await script(key, [{ execute: {} }]);
    const gone = api.messages.create(execParams("ls", { uploads: [upload.id] }));
    await expect(gone).rejects.toMatchObject({ status: 400, apiMessage: expect.stringContaining(upload.id) });

    const seen = (await (await fetch(`${url}/__kiln/file-requests?key=${encodeURIComponent(key)}`)).json()) as RecordedFileRequest[];
    expect(seen[0]).toMatchObject({ method: "POST", path: "/v1/files", status: 200, file: { id: upload.id, filename: "scores.csv" } });
    expect(seen[0].headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen.map((request) => `${request.method} ${request.path.split("?")[0]} ${request.status}`)).toContain(`GET /v1/files/${upload.id}/content 400`);
  });

  it("keeps binary uploads intact, names nameless ones, and checks auth on the Files API", async () => {
    const key = freshKey();
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, n) => (n * 37) % 256));
    const form = new FormData();
    form.append("file", new Blob([bytes], { type: "image/png" }), "");
    const res = await fetch(`${url}/v1/files`, { method: "POST", headers: { "x-api-key": key }, body: form });
    expect(res.status).toBe(200);
    const meta = (await res.json()) as Anthropic.FileMetadata;
    expect(meta).toMatchObject({ filename: "unnamed.png", mime_type: "image/png", size_bytes: 4096 });
    await script(key, [{ execute: {} }]);
    const message = await client(key).messages.create(execParams('sha256sum "$INPUT_DIR/unnamed.png" | cut -c1-64', { uploads: [meta.id] }));
    const { createHash } = await import("node:crypto");
    expect(okResultOf(message).stdout.trim()).toBe(createHash("sha256").update(bytes).digest("hex"));

    await expect(client("bad-key").files.list()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    expect((await fetch(`${url}/v1/files`)).status).toBe(401);
    const noFile = new FormData();
    noFile.append("purpose", "x");
    const missing = await fetch(`${url}/v1/files`, { method: "POST", headers: { "x-api-key": key }, body: noFile });
    expect(missing.status).toBe(400);

    const preflight = await fetch(`${url}/v1/files`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:4173", "access-control-request-method": "POST", "access-control-request-headers": "anthropic-beta, anthropic-version, content-type, x-api-key, x-stainless-helper, x-stainless-retry-count" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("x-stainless-helper");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("content-type");
  });

  it("answers each scripted error code with the error form of the result, running nothing", async () => {
    const key = freshKey();
    const codes: ExecErrorCode[] = ["unavailable", "too_many_requests", "execution_time_exceeded", "output_file_too_large", "invalid_tool_input"];
    await script(key, codes.map((errorCode): Reply => ({ execute: { errorCode } })));
    for (const code of codes) {
      const message = await client(key).messages.create(execParams("touch ran.txt"));
      expect(resultOf(message)).toEqual({ type: "bash_code_execution_tool_result_error", error_code: code });
      expect(message.container?.id).toMatch(/^container_/);
    }
  });

  it("pauses first when asked, then runs on the continuation in the same container", async () => {
    const key = freshKey();
    const api = client(key);
    await script(key, [{ execute: { pauseFirst: true, command: "echo changed by the model" } }]);
    const params = execParams("echo as written");
    const paused = await streamed(api, params);
    expect(paused.message.stop_reason).toBe("pause_turn");
    expect(paused.message.content).toEqual([{ type: "text", text: expect.any(String) }]);
    const container = paused.message.container?.id ?? "";
    expect(container).toMatch(/^container_/);

    const continued = await streamed(api, { ...params, container, messages: [...params.messages, { role: "assistant", content: paused.message.content }] } as ReturnType<typeof execParams>);
    expect(continued.message.stop_reason).toBe("end_turn");
    expect(continued.message.container?.id).toBe(container);
    expect(continued.message.content[0]).toMatchObject({ type: "server_tool_use", input: { command: "echo changed by the model" } });
    expect(okResultOf(continued.message).stdout).toBe("changed by the model\n");
  });

  it("uses code_execution blocks and runs Python for the legacy tool version", async () => {
    const key = freshKey();
    await script(key, [{ execute: {} }]);
    const code = 'import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "chart.svg"), "w").write("<svg/>")\nprint(sum(range(5)))';
    const { events, message } = await streamed(client(key), execParams(code, { version: "code_execution_20250522" }));
    const [toolUse, result] = message.content as [Content, Content];
    expect(toolUse).toMatchObject({ type: "server_tool_use", name: "code_execution", input: { code } });
    expect(result).toMatchObject({
      type: "code_execution_tool_result",
      content: { type: "code_execution_result", stdout: "10\n", stderr: "", return_code: 0, content: [{ type: "code_execution_output", file_id: expect.stringMatching(/^file_/) }] },
    });
    expect(events.some((event) => event.type === "content_block_start" && event.content_block.type === "code_execution_tool_result")).toBe(true);
    const file = await client(key).files.retrieveMetadata((result as Anthropic.CodeExecutionToolResultBlock & { content: Anthropic.CodeExecutionResultBlock }).content.content[0].file_id);
    expect(file).toMatchObject({ filename: "chart.svg", mime_type: "image/svg+xml", downloadable: true });
  });

  it("has the sandbox's torch stand-in importable", async () => {
    const key = freshKey();
    await script(key, [{ execute: {} }]);
    const message = await client(key).messages.create(
      execParams(`python3 -c 'import torch; t = torch.tensor([1, 2, 3]); print(torch.__version__, t, t.sum().item(), torch.cuda.is_available())'`),
    );
    expect(okResultOf(message)).toMatchObject({ stdout: "2.9.0+cpu tensor([1, 2, 3]) 6 False\n", stderr: "", return_code: 0 });
  });

  it("refuses an execute reply without the tool or a fenced block, and keeps the reply for the next request", async () => {
    const key = freshKey();
    const api = client(key);
    await script(key, [{ execute: {} }]);
    const noTool = api.messages.create({ ...hello, messages: [{ role: "user", content: "```bash\necho hi\n```" }] });
    await expect(noTool).rejects.toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: expect.stringContaining("code execution tool") });
    const noBlock = api.messages.create(execParams("print(1)", { language: "python" }));
    await expect(noBlock).rejects.toMatchObject({ status: 400, apiMessage: expect.stringContaining("```bash") });
    expect(okResultOf(await api.messages.create(execParams("echo hi"))).stdout).toBe("hi\n");
    await script(key, [{ execute: {} }]);
    const fenced = "printf '%s\\n' 'a ```fence``` inside'\necho after";
    expect(okResultOf(await api.messages.create(execParams(fenced))).stdout).toBe("a ```fence``` inside\nafter\n");
  });
});

describe("fake Anthropic API: sandbox limits", () => {
  let limited = "";
  let closeLimited: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ url: limited, close: closeLimited } = await startFakeAnthropic({ execTimeoutMs: 300, containerIdleMs: 1000, maxUploadBytes: 1000, maxOutputFileBytes: 1000 }));
  });
  afterAll(() => closeLimited());
  const limitedClient = (apiKey: string) => new Anthropic({ apiKey, baseURL: limited, maxRetries: 0 });
  const scriptLimited = async (key: string, replies: Reply[]) => {
    await fetch(`${limited}/__kiln/script`, { method: "POST", body: JSON.stringify({ key, replies }) });
  };

  it("kills a run over its time limit, refuses a big output file, and expires an idle container", async () => {
    const key = freshKey();
    const api = limitedClient(key);
    await scriptLimited(key, [{ execute: {} }, { execute: {} }, { execute: { timeoutMs: 5000 } }, { execute: {} }]);
    const started = Date.now();
    const slow = await api.messages.create(execParams("sleep 10; echo never"));
    expect(resultOf(slow)).toEqual({ type: "bash_code_execution_tool_result_error", error_code: "execution_time_exceeded" });
    expect(Date.now() - started).toBeLessThan(3000);

    const big = await api.messages.create(execParams('head -c 5000 /dev/zero > "$OUTPUT_DIR/big.bin"', { container: slow.container?.id }));
    expect(resultOf(big)).toEqual({ type: "bash_code_execution_tool_result_error", error_code: "output_file_too_large" });

    const patient = await api.messages.create(execParams("sleep 0.5; echo waited", { container: big.container?.id }));
    expect(okResultOf(patient).stdout).toBe("waited\n");

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const idle = api.messages.create(execParams("true", { container: patient.container?.id }));
    await expect(idle).rejects.toMatchObject({ status: 400, apiMessage: `container ${patient.container?.id} has expired` });
  });

  it("refuses an upload over the size limit with a 413", async () => {
    const api = limitedClient(freshKey());
    const failure = await api.files.upload({ file: await toFile(Buffer.alloc(2000), "big.bin") }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(failure).toMatchObject({ status: 413, type: "request_too_large" });
    expect((await api.files.upload({ file: await toFile(Buffer.alloc(100), "small.bin") })).size_bytes).toBe(100);
  });
});

describe("fake Anthropic API: only its test run's token gets in", () => {
  const origin = () => new URL(url).origin;
  const notFound = { type: "error", error: { type: "not_found_error", message: expect.any(String) } };
  /** A token of the same length that differs in its last character. */
  const wrongToken = () => token.slice(0, -1) + (token.endsWith("0") ? "1" : "0");
  let scratch = "";
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "kiln-token-test-"));
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  /** POST a valid code execution request (key and all) to `base`: the scripted reply would run `touch <marker>`. */
  const postExec = (base: string, key: string) =>
    fetch(`${base}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(execParams("true")),
    });

  it("listens on a port the OS picked, under a fresh random token", async () => {
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/${token}$`));
    expect(new URL(url).port).not.toBe("4181");
    const other = await startFakeAnthropic();
    try {
      expect(other.token).not.toBe(token);
      expect(new URL(other.url).port).not.toBe(new URL(url).port);
      // Each server answers its own token only.
      expect((await fetch(`${other.url}/v1/models`, { headers: { "x-api-key": freshKey() } })).status).toBe(200);
      expect((await fetch(`${new URL(other.url).origin}/${token}/v1/models`, { headers: { "x-api-key": freshKey() } })).status).toBe(404);
    } finally {
      await other.close();
    }
  });

  it("takes a given token, and refuses a short or unsafe one", async () => {
    const given = "given-token_0123456789";
    const server = await startFakeAnthropic({ token: given });
    try {
      expect(server.token).toBe(given);
      expect(server.url.endsWith(`/${given}`)).toBe(true);
      expect((await fetch(`${server.url}/v1/models`, { headers: { "x-api-key": freshKey() } })).status).toBe(200);
    } finally {
      await server.close();
    }
    await expect(startFakeAnthropic({ token: "short" })).rejects.toThrow(/token/);
    await expect(startFakeAnthropic({ token: "../../0123456789abcdef" })).rejects.toThrow(/token/);
  });

  it("answers a request without the token with a 404, runs nothing and records nothing; the right token runs it", async () => {
    const key = freshKey();
    const marker = join(scratch, "ran-without-token");
    await script(key, [{ execute: { command: `touch '${marker}'` } }]);

    const res = await postExec(origin(), key);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual(notFound);
    expect(existsSync(marker)).toBe(false);
    expect(await requests(key)).toEqual([]);
    // The control routes are behind the token too.
    expect((await fetch(`${origin()}/__kiln/requests?key=${key}`)).status).toBe(404);
    const queued = await fetch(`${origin()}/__kiln/script`, { method: "POST", body: JSON.stringify({ key, replies: [{ execute: { command: "exit 7" } }] }) });
    expect(queued.status).toBe(404);

    // The scripted reply is still the first in the queue: with the token, it runs.
    const ok = await postExec(url, key);
    expect(ok.status).toBe(200);
    const message = (await ok.json()) as Anthropic.Message;
    expect(okResultOf(message).return_code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(await requests(key)).toHaveLength(1);
  });

  it("answers a wrong token, or the token anywhere but as the whole first segment, with a 404", async () => {
    const key = freshKey();
    const marker = join(scratch, "ran-with-wrong-token");
    await script(key, [{ execute: { command: `touch '${marker}'` } }]);
    const wrongBases = [
      `${origin()}/${wrongToken()}`,
      `${origin()}/${token.toUpperCase()}`,
      `${origin()}/${token.slice(0, -1)}`,
      `${origin()}/${token}0`,
      `${origin()}/x/${token}`,
    ];
    for (const base of wrongBases) {
      const res = await postExec(base, key);
      expect(res.status, base).toBe(404);
      expect(await res.json()).toEqual(notFound);
      expect((await fetch(`${base}/v1/models`, { headers: { "x-api-key": key } })).status, base).toBe(404);
      expect((await fetch(`${base}/v1/files`, { headers: { "x-api-key": key } })).status, base).toBe(404);
    }
    // The token must be a path segment of its own, not a prefix of the next one or a query parameter.
    expect((await fetch(`${origin()}/${token}v1/models`, { headers: { "x-api-key": key } })).status).toBe(404);
    expect((await fetch(`${origin()}/${token}`, { headers: { "x-api-key": key } })).status).toBe(404);
    expect((await fetch(`${origin()}/v1/models?token=${token}`, { headers: { "x-api-key": key } })).status).toBe(404);
    expect(existsSync(marker)).toBe(false);
    expect(await requests(key)).toEqual([]);
    expect(await (await fetch(`${url}/__kiln/file-requests?key=${encodeURIComponent(key)}`)).json()).toEqual([]);
  });

  it("answers a CORS preflight without the token with a 404 that the browser can read", async () => {
    const preflight = { origin: "http://localhost:4173", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key, content-type" };
    for (const base of [origin(), `${origin()}/${wrongToken()}`]) {
      const res = await fetch(`${base}/v1/messages`, { method: "OPTIONS", headers: preflight });
      expect(res.status, base).toBe(404);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toBeNull();
      expect(res.headers.get("access-control-allow-headers")).toBeNull();
      expect(await res.json()).toEqual(notFound);
    }
    expect((await fetch(`${url}/v1/messages`, { method: "OPTIONS", headers: preflight })).status).toBe(204);
  });
});
