import { ApiError, GoogleGenAI, type Content, type GenerateContentParameters, type GenerateContentResponse, type Part } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeGemini, type RecordedRequest, type Reply, type SessionConfig } from "./server.ts";

/** `http://127.0.0.1:<port>/<token>`; a session's SDK base URL is `${url}/<session>`. */
let url = "";
let token = "";
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ url, token, close } = await startFakeGemini()); // a free port and a fresh token
});
afterAll(() => close());

let sessionCount = 0;
/** A fresh session, so each test has a queue, a request log, a configuration and signatures of its own. */
const freshSession = () => `test-session-${++sessionCount}`;
/** The SDK as the app would make it: the session's base URL, the v1beta API (unless told otherwise). */
const client = (session: string, apiKey = "test-key", apiVersion: string | null = "v1beta", base = url) =>
  new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${base}/${session}`, ...(apiVersion ? { apiVersion } : {}) } });

async function control(route: string, body: unknown, base = url): Promise<void> {
  const res = await fetch(`${base}/__kiln/${route}`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}
const script = (session: string, replies: Reply[], base = url) => control("script", { session, replies }, base);
const configure = (session: string, config: SessionConfig) => control("configure", { session, ...config });
async function requests(session: string): Promise<RecordedRequest[]> {
  return (await fetch(`${url}/__kiln/requests?session=${encodeURIComponent(session)}`)).json() as Promise<RecordedRequest[]>;
}

/** A raw generateContent request: its status and JSON body. */
async function post(session: string, body: unknown, method = "generateContent", key: string | null = "test-key") {
  const res = await fetch(`${url}/${session}/v1beta/models/gemini-3-flash:${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "x-goog-api-key": key } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { error?: { code: number; message: string; status: string; details?: unknown[] } } & Record<string, unknown> };
}

/** Every chunk of a streamed answer. */
async function streamed(ai: GoogleGenAI, params: GenerateContentParameters): Promise<GenerateContentResponse[]> {
  const chunks: GenerateContentResponse[] = [];
  for await (const chunk of await ai.models.generateContentStream(params)) chunks.push(chunk);
  return chunks;
}
/** The parts of all chunks, in order. */
const partsOf = (chunks: GenerateContentResponse[]): Part[] => chunks.flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? []);

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("expected a rejection");
}

const hello = { model: "gemini-3-flash", contents: "Hello" };
const pythonTool = {
  functionDeclarations: [
    { name: "run_python", description: "Run Python", parametersJsonSchema: { type: "object", properties: { code: { type: "string" } }, required: ["code"] } },
  ],
};
const user = (text: string): Content => ({ role: "user", parts: [{ text }] });
const call = (name: string, args: Record<string, unknown>, extra: Partial<Part> = {}): Part => ({ functionCall: { name, args }, ...extra });
const answer = (name: string, response: Record<string, unknown>): Part => ({ functionResponse: { name, response } });

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

describe("fake Gemini API", () => {
  it("streams text over several SSE chunks, the last one with finishReason and the full usage", async () => {
    const session = freshSession();
    await script(session, [{ parts: [{ text: "Hello there, from the fake Gemini API! Nice to meet you." }] }]);
    const chunks = await streamed(client(session), hello);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((chunk) => chunk.text).join("")).toBe("Hello there, from the fake Gemini API! Nice to meet you.");
    for (const chunk of chunks) {
      expect(chunk.candidates?.[0]).toMatchObject({ content: { role: "model" }, index: 0 });
      expect(chunk.modelVersion).toBe("gemini-3-flash");
      expect(chunk.responseId).toBe(chunks[0].responseId);
    }
    expect(chunks.slice(0, -1).every((chunk) => chunk.candidates?.[0]?.finishReason === undefined)).toBe(true);
    const last = chunks[chunks.length - 1];
    expect(last.candidates?.[0]?.finishReason).toBe("STOP");
    const usage = last.usageMetadata!;
    expect(usage.promptTokenCount).toBeGreaterThan(0);
    expect(usage.candidatesTokenCount).toBeGreaterThan(0);
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount!);

    const [request] = await requests(session);
    expect(request.url).toBe("/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse");
    expect(request.headers).toEqual({ "x-goog-api-key": "test-key" });
    expect(request.body).toEqual({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] });
  });

  it("sends data-only SSE events ended by CRLF CRLF; without alt=sse a JSON array of the same chunks", async () => {
    const session = freshSession();
    await script(session, [{ parts: [{ text: "One two three four." }] }, { parts: [{ text: "One two three four." }] }]);
    const body = { contents: [user("Hi")] };
    const res = await fetch(`${url}/${session}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "x-goog-api-key": "k" },
      body: JSON.stringify(body),
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const raw = await res.text();
    expect(raw).not.toContain("event:");
    expect(raw.endsWith("\r\n\r\n")).toBe(true);
    const events = raw.split("\r\n\r\n").filter(Boolean);
    expect(events.every((event) => event.startsWith("data: ") && !event.includes("\n"))).toBe(true);
    const chunks = events.map((event) => JSON.parse(event.slice(6)) as GenerateContentResponse);
    expect(chunks[chunks.length - 1].candidates![0].finishReason).toBe("STOP");

    const array = await fetch(`${url}/${session}/v1beta/models/gemini-2.5-pro:streamGenerateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": "k" },
      body: JSON.stringify(body),
    });
    expect(array.headers.get("content-type")).toContain("application/json");
    const list = (await array.json()) as GenerateContentResponse[];
    expect(list.map((chunk) => chunk.candidates![0].content!.parts![0].text).join("")).toBe("One two three four.");
  });

  it("answers generateContent with one JSON, and serves the SDK's default API version (v1) too", async () => {
    const session = freshSession();
    await script(session, [{ parts: [{ text: "All at once." }] }]);
    const response = await client(session, "test-key", null).models.generateContent({ ...hello, config: { systemInstruction: "Be brief.", temperature: 0.2 } });
    expect(response.text).toBe("All at once.");
    expect(response.candidates?.[0]).toMatchObject({ finishReason: "STOP", index: 0 });
    expect(response.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    const [request] = await requests(session);
    expect(request.url).toBe("/v1/models/gemini-3-flash:generateContent");
    expect(request.body).toMatchObject({ systemInstruction: { parts: [{ text: "Be brief." }] }, generationConfig: { temperature: 0.2 } });
  });

  it("answers a function call, then the follow-up request with its functionResponse", async () => {
    const session = freshSession();
    await script(session, [
      { parts: [{ text: "Let me run that." }, { functionCall: { name: "run_python", args: { code: "print(6 * 7)" } } }] },
      { parts: [{ text: "The answer is 42." }] },
    ]);
    const ai = client(session);
    const chunks = await streamed(ai, { model: "gemini-3-flash", contents: [user("What is 6 * 7?")], config: { tools: [pythonTool] } });
    const calls = chunks.flatMap((chunk) => chunk.functionCalls ?? []);
    expect(calls).toEqual([{ name: "run_python", args: { code: "print(6 * 7)" } }]);
    // The call came whole, in one chunk.
    expect(chunks.filter((chunk) => chunk.functionCalls?.length).length).toBe(1);
    expect(chunks[chunks.length - 1].candidates?.[0]?.finishReason).toBe("STOP");

    const history: Content[] = [
      user("What is 6 * 7?"),
      { role: "model", parts: partsOf(chunks) },
      { role: "user", parts: [answer("run_python", { output: "42\n" })] },
    ];
    const follow = await streamed(ai, { model: "gemini-3-flash", contents: history, config: { tools: [pythonTool] } });
    expect(follow.map((chunk) => chunk.text).join("")).toBe("The answer is 42.");
    const recorded = await requests(session);
    expect(recorded).toHaveLength(2);
    expect((recorded[1].body as { contents: Content[] }).contents[2]).toEqual({ role: "user", parts: [{ functionResponse: { name: "run_python", response: { output: "42\n" } } }] });
  });

  it("refuses unanswered function calls, orphan responses and mismatched pairs, and keeps the reply queued", async () => {
    const session = freshSession();
    await script(session, [{ parts: [{ text: "Fine." }] }]);
    const model = (...parts: Part[]): Content => ({ role: "model", parts });
    const refused = [
      // A call whose answer never comes.
      { contents: [user("Go"), model(call("run_python", { code: "1" })), user("And?")], message: /number of function response parts is equal/ },
      // A call as the last content.
      { contents: [user("Go"), model(call("run_python", { code: "1" }))], message: /number of function response parts is equal/ },
      // A response without a call before it.
      { contents: [user("Go"), model({ text: "Hm." }), { role: "user", parts: [answer("run_python", {})] }], message: /function response turn comes immediately after a function call turn/ },
      // Two calls, one answer.
      {
        contents: [user("Go"), model(call("a", {}), call("b", {})), { role: "user", parts: [answer("a", {})] }],
        message: /number of function response parts is equal/,
      },
      // An answer to a function the model never called.
      { contents: [user("Go"), model(call("a", {})), { role: "user", parts: [answer("b", {})] }], message: /function response `b`.*has no matching function call/ },
      // A call first.
      { contents: [model(call("a", {})), { role: "user", parts: [answer("a", {})] }], message: /function call turn comes immediately after a user turn/ },
    ];
    for (const { contents, message } of refused) {
      const { status, json } = await post(session, { contents });
      expect(status, JSON.stringify(contents)).toBe(400);
      expect(json.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
      expect(json.error!.message).toMatch(message);
    }
    // Ids pair calls and responses when both have one.
    const withIds = [user("Go"), model({ functionCall: { id: "c1", name: "a", args: {} } }), { role: "user", parts: [{ functionResponse: { id: "c2", name: "a", response: {} } }] }];
    expect((await post(session, { contents: withIds })).status).toBe(400);
    // The SDK surfaces the refusal as an ApiError.
    const error = await failure(client(session).models.generateContent({ model: "gemini-3-flash", contents: refused[0].contents }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    // Nothing was used up.
    const ok = await post(session, { contents: [user("Go"), model(call("a", { x: 1 })), { role: "user", parts: [answer("a", { y: 2 })] }] });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.json)).toContain("Fine.");
    expect(await requests(session)).toHaveLength(refused.length + 3);
  });

  it("validates the request's shape as the real API does", async () => {
    const session = freshSession();
    const cases: [unknown, RegExp][] = [
      [{ contents: [] }, /GenerateContentRequest\.contents: contents is not specified/],
      [{}, /contents is not specified/],
      [{ contents: [{ role: "assistant", parts: [{ text: "x" }] }] }, /Please use a valid role: user, model\./],
      [{ contents: [{ role: "user", parts: [] }] }, /contents\[0\]\.parts: contents\.parts must not be empty/],
      [{ contents: [{ role: "user", parts: [{ thought: true }] }] }, /contents\[0\]\.parts\[0\]\.data: required oneof field 'data'/],
      [{ contents: [{ role: "user", parts: [{ text: "a", inlineData: { mimeType: "text/plain", data: "YQ==" } }] }] }, /Oneof field 'data' is already set/],
      [{ contents: [{ role: "user", parts: [{ txt: "a" }] }] }, /Unknown name "txt" at 'contents\[0\]\.parts\[0\]': Cannot find field\./],
      [{ contents: [user("a")], temperature: 1 }, /Unknown name "temperature": Cannot find field\./],
      [{ contents: [{ role: "user", parts: [{ text: 5 }] }] }, /Invalid value at 'contents\[0\]\.parts\[0\]\.text' \(TYPE_STRING\), 5/],
      [{ contents: [{ role: "user", parts: [{ inlineData: { mimeType: "text/plain", data: "not base64!" } }] }] }, /inline_data\.data' \(TYPE_BYTES\)/],
      [{ contents: [{ role: "user", parts: [{ inlineData: { data: "YQ==" } }] }] }, /inline_data\.mime_type/],
      [
        { contents: [user("a"), { role: "model", parts: [call("f", {})] }, { role: "user", parts: [{ functionResponse: { name: "f", response: "ok" } }] }] },
        /function_response\.response' \(type\.googleapis\.com\/google\.protobuf\.Struct\), "ok"/,
      ],
      [{ contents: [user("a")], tools: [{ functionDeclarations: [{ name: "1bad name" }] }] }, /Invalid function name\. Must start with a letter or an underscore/],
      [{ contents: [user("a")], tools: [{ functionDeclarations: [{ name: "f" }, { name: "f" }] }] }, /Duplicate function declaration found: f/],
      [{ contents: [user("a")], tools: [{ functionDeclarations: [{ name: "f", parameters: { type: "OBJECT" }, parametersJsonSchema: { type: "object" } }] }] }, /cannot both be set/],
      [{ contents: [user("a")], tools: [{ codeExecution: true }] }, /Invalid value at 'tools\[0\]\.code_execution'/],
      [{ contents: [user("a")], generationConfig: { temperature: "hot" } }, /generation_config\.temperature' \(TYPE_FLOAT\)/],
      [{ contents: [user("a")], systemInstruction: { parts: [] } }, /system_instruction\.parts: contents\.parts must not be empty/],
      ["{not json", /Invalid JSON payload received/],
    ];
    for (const [body, message] of cases) {
      const { status, json } = await post(session, body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(json.error?.status).toBe("INVALID_ARGUMENT");
      expect(json.error?.message, JSON.stringify(body)).toMatch(message);
    }
    // snake_case names and a single object for a list are taken, as by the real API's parser.
    await script(session, [{ parts: [{ text: "Parsed." }] }]);
    const lenient = await post(session, { contents: { parts: { text: "Hi" } }, system_instruction: { parts: [{ text: "Short." }] }, generation_config: { max_output_tokens: 10 } });
    expect(lenient.status).toBe(200);
    // An unknown model, or one that cannot generate, is a 404.
    for (const model of ["gemini-9-ultra", "gemini-embedding-001"]) {
      const res = await fetch(`${url}/${session}/v1beta/models/${model}:generateContent`, { method: "POST", headers: { "x-goog-api-key": "k" }, body: JSON.stringify({ contents: [user("a")] }) });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        error: {
          code: 404,
          message: `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
          status: "NOT_FOUND",
        },
      });
    }
  });

  it("gives scripted function calls a thought signature and requires it back in the current turn", async () => {
    const session = freshSession();
    await script(session, [
      { parts: [{ text: "Running." }, { functionCall: { name: "run_python", args: { code: "print(1)" } } }, { functionCall: { name: "run_python", args: { code: "print(2)" } } }], signature: true },
      { parts: [{ text: "Ok." }] },
      { parts: [{ text: "Ok again." }] },
      { parts: [{ text: "A thoughtful answer." }], signature: true },
    ]);
    const ai = client(session);
    const first = await streamed(ai, { model: "gemini-3-flash", contents: [user("Run two")], config: { tools: [pythonTool] } });
    const parts = partsOf(first);
    const calls = parts.filter((part) => part.functionCall);
    expect(calls).toHaveLength(2);
    // Only the first call of the step carries one, as with Gemini 3.
    expect(calls[0].thoughtSignature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(calls[1].thoughtSignature).toBeUndefined();
    const answers: Content = { role: "user", parts: [answer("run_python", { output: "1" }), answer("run_python", { output: "2" })] };
    const turn = (modelParts: Part[]) => [user("Run two"), { role: "model", parts: modelParts }, answers];

    // Stripped: refused, naming the call and the content's position.
    const stripped = parts.map(({ thoughtSignature: _, ...part }) => part);
    const missing = await failure(ai.models.generateContent({ model: "gemini-3-flash", contents: turn(stripped), config: { tools: [pythonTool] } }));
    expect(missing.status).toBe(400);
    expect(missing.message).toContain("Function call is missing a thought_signature in functionCall parts.");
    expect(missing.message).toContain("function call `default_api:run_python` , position 2.");
    // Made up, or moved to the other call: corrupted.
    const madeUp = parts.map((part) => (part.thoughtSignature ? { ...part, thoughtSignature: "c2lnbmF0dXJl" } : part));
    expect((await post(session, { contents: turn(madeUp), tools: [pythonTool] })).json.error?.message).toBe("Corrupted thought signature.");
    const copied = [parts[0], calls[0], { ...calls[1], thoughtSignature: calls[0].thoughtSignature }];
    expect((await post(session, { contents: turn(copied), tools: [pythonTool] })).json.error?.message).toBe("Corrupted thought signature.");
    const moved = [parts[0], { ...calls[0], thoughtSignature: undefined }, { ...calls[1], thoughtSignature: calls[0].thoughtSignature }];
    expect((await post(session, { contents: turn(moved), tools: [pythonTool] })).json.error?.message).toMatch(/^Function call is missing a thought_signature/);
    // Sent back as given: fine. So is the documented stand-in.
    expect((await ai.models.generateContent({ model: "gemini-3-flash", contents: turn(parts), config: { tools: [pythonTool] } })).text).toBe("Ok.");
    const standIn = parts.map((part) => (part.thoughtSignature ? { ...part, thoughtSignature: "skip_thought_signature_validator" } : part));
    expect((await post(session, { contents: turn(standIn), tools: [pythonTool] })).status).toBe(200);
    // Once a new user message starts a new turn, the earlier calls are no longer checked.
    const later = await streamed(ai, { model: "gemini-3-flash", contents: [...turn(stripped), { role: "model", parts: [{ text: "Ok." }] }, user("Thanks")] });
    // Without function calls, the signature comes in a last chunk of its own, with an empty text.
    const lastParts = later[later.length - 1].candidates?.[0]?.content?.parts;
    expect(lastParts).toEqual([{ text: "", thoughtSignature: expect.any(String) }]);
    expect(later.map((chunk) => chunk.text ?? "").join("")).toBe("A thoughtful answer.");
  });

  it("runs the last user turn's Python with its inline files, statelessly, and returns the output and the PNGs it wrote", async () => {
    const session = freshSession();
    await script(session, [{ execute: {} }, { execute: { text: "Checked." } }]);
    const code = [
      "import base64, os",
      "print(open('data.csv').read().strip())",
      "print(open('input_file_1.txt').read())",
      `open('plot.png', 'wb').write(base64.b64decode('${PNG}'))`,
      "open('notes.txt', 'w').write('left behind')",
    ].join("\n");
    const contents: Content[] = [
      {
        role: "user",
        parts: [
          { text: `Please run this:\n\`\`\`python\n${code}\n\`\`\`\n` },
          { inlineData: { mimeType: "text/csv", data: Buffer.from("a,b\n1,2\n").toString("base64"), displayName: "data.csv" } },
          { inlineData: { mimeType: "text/plain", data: Buffer.from("plain text").toString("base64") } },
        ],
      },
    ];
    const ai = client(session);
    const chunks = await streamed(ai, { model: "gemini-3-flash", contents, config: { tools: [{ codeExecution: {} }] } });
    const parts = partsOf(chunks);
    expect(parts[0]).toEqual({ executableCode: { language: "PYTHON", code } });
    expect(parts[1]).toEqual({ codeExecutionResult: { outcome: "OUTCOME_OK", output: "a,b\n1,2\nplain text\n" } });
    expect(parts[2]).toEqual({ inlineData: { mimeType: "image/png", data: PNG } });
    expect(parts.slice(3).map((part) => part.text).join("")).toBe("Done.");
    expect(chunks[chunks.length - 1].candidates?.[0]?.finishReason).toBe("STOP");

    // A second run starts from nothing: the files the first one wrote are gone, the inputs are back.
    const again: Content[] = [
      ...contents,
      { role: "model", parts },
      user("```python\nimport os\nprint(sorted(os.listdir('.')))\n```"),
    ];
    const second = await ai.models.generateContent({ model: "gemini-3-flash", contents: again, config: { tools: [{ codeExecution: {} }] } });
    const secondParts = second.candidates![0].content!.parts!;
    expect(secondParts[1].codeExecutionResult).toEqual({ outcome: "OUTCOME_OK", output: "['data.csv', 'input_file_1.txt']\n" });
    expect(secondParts).toHaveLength(3);
    expect(secondParts[2].text).toBe("Checked.");
  });

  it("reports a failing run as OUTCOME_FAILED with stdout then stderr, and runs execute.code when given", async () => {
    const session = freshSession();
    await script(session, [{ execute: { code: "print('before')\nraise ValueError('bad value')", text: "It failed." } }, { execute: { code: "pass" } }]);
    const ai = client(session);
    const params = { model: "gemini-2.5-pro", contents: [user("Try something (no code block here).")], config: { tools: [{ codeExecution: {} }] } };
    const parts = partsOf(await streamed(ai, params));
    expect(parts[0].executableCode?.code).toBe("print('before')\nraise ValueError('bad value')");
    expect(parts[1].codeExecutionResult?.outcome).toBe("OUTCOME_FAILED");
    expect(parts[1].codeExecutionResult?.output).toMatch(/^before\nTraceback \(most recent call last\):[\s\S]*ValueError: bad value\n$/);
    expect(parts.slice(2).map((part) => part.text).join("")).toBe("It failed.");
    // No output at all: `output` is left out.
    const quiet = partsOf(await streamed(ai, params));
    expect(quiet[1].codeExecutionResult).toEqual({ outcome: "OUTCOME_OK" });
  });

  it("stops a run at the time limit with OUTCOME_DEADLINE_EXCEEDED and the output so far", async () => {
    // Long enough for python3 to start and print on a busy machine; far shorter than the sleep.
    const short = await startFakeGemini({ execTimeoutMs: 2000 });
    try {
      const session = freshSession();
      await script(session, [{ execute: {} }], short.url);
      const started = Date.now();
      const contents = [user("```python\nimport time\nprint('started', flush=True)\ntime.sleep(20)\n```")];
      const parts = partsOf(await streamed(client(session, "k", "v1beta", short.url), { model: "gemini-3-flash", contents, config: { tools: [{ codeExecution: {} }] } }));
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(parts[1].codeExecutionResult).toEqual({ outcome: "OUTCOME_DEADLINE_EXCEEDED", output: "started\n" });
    } finally {
      await short.close();
    }
  });

  it("refuses an execute reply without the codeExecution tool or without code, and keeps it queued", async () => {
    const session = freshSession();
    await script(session, [{ execute: {} }]);
    const code = [user("```python\nprint(3)\n```")];
    const noTool = await post(session, { contents: code, tools: [pythonTool] });
    expect(noTool.status).toBe(400);
    expect(noTool.json.error?.message).toContain("no codeExecution tool");
    const noCode = await post(session, { contents: [user("No code here.")], tools: [{ code_execution: {} }] });
    expect(noCode.status).toBe(400);
    expect(noCode.json.error?.message).toContain("no ```python block");
    const ok = await post(session, { contents: code, tools: [{ code_execution: {} }] });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.json)).toContain('"outcome":"OUTCOME_OK","output":"3\\n"');
  });

  it("refuses a missing key with 403 and the key bad-key with 400 API_KEY_INVALID; ?key= works too", async () => {
    const session = freshSession();
    const bad = await failure(client(session, "bad-key").models.generateContent(hello));
    expect(bad).toBeInstanceOf(ApiError);
    expect(bad.status).toBe(400);
    const body = JSON.parse(bad.message) as { error: { code: number; message: string; status: string; details: { reason?: string }[] } };
    expect(body.error).toMatchObject({ code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" });
    expect(body.error.details[0].reason).toBe("API_KEY_INVALID");
    const listed = await failure(client(session, "bad-key").models.list());
    expect(listed.status).toBe(400);

    const none = await post(session, { contents: [user("a")] }, "generateContent", null);
    expect(none.status).toBe(403);
    expect(none.json.error).toMatchObject({ code: 403, status: "PERMISSION_DENIED" });
    expect(none.json.error?.message).toMatch(/^Method doesn't allow unregistered callers/);

    await script(session, [{ parts: [{ text: "By query." }] }]);
    const res = await fetch(`${url}/${session}/v1beta/models/gemini-3-flash:generateContent?key=query-key`, { method: "POST", body: JSON.stringify({ contents: [user("a")] }) });
    expect(res.status).toBe(200);
    const recorded = await requests(session);
    expect(recorded.map((request) => request.headers["x-goog-api-key"])).toEqual(["bad-key", null, null]);
    expect(recorded[2].url).toBe("/v1beta/models/gemini-3-flash:generateContent?key=query-key");
  });

  it("lists the session's models in pages, as the SDK reads them", async () => {
    const session = freshSession();
    const ai = client(session);
    const names: string[] = [];
    const pager = await ai.models.list({ config: { pageSize: 2 } });
    for await (const model of pager) names.push(model.name!);
    expect(names).toEqual(["models/gemini-3-flash", "models/gemini-3-pro", "models/gemini-2.5-pro", "models/gemini-2.5-flash", "models/gemini-embedding-001"]);
    const raw = (await (await fetch(`${url}/${session}/v1beta/models`, { headers: { "x-goog-api-key": "k" } })).json()) as { models: Record<string, unknown>[]; nextPageToken?: string };
    expect(raw.nextPageToken).toBeUndefined();
    expect(raw.models[0]).toMatchObject({ name: "models/gemini-3-flash", displayName: "Gemini 3 Flash", supportedGenerationMethods: expect.arrayContaining(["generateContent"]) });
    expect(raw.models[4].supportedGenerationMethods).not.toContain("generateContent");
    const one = await ai.models.get({ model: "gemini-2.5-pro" });
    expect(one.displayName).toBe("Gemini 2.5 Pro");

    await configure(session, { models: ["gemini-test-1", { name: "models/gemini-test-2", displayName: "Test Two" }] });
    const configured: string[] = [];
    for await (const model of await ai.models.list()) configured.push(`${model.name} ${model.displayName}`);
    expect(configured).toEqual(["models/gemini-test-1 Gemini Test 1", "models/gemini-test-2 Test Two"]);
    expect((await post(session, { contents: [user("a")] })).status).toBe(404); // gemini-3-flash is gone
  });

  it("answers scripted errors and drops a stream after N chunks", async () => {
    const session = freshSession();
    await script(session, [
      { status: 429, error: { message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" }, headers: { "retry-after": "7" } },
      { parts: [{ text: "This text will be cut off before it ends, somewhere in the middle of it." }], dropAfterChunks: 1 },
      { parts: [{ text: "Cut." }], finishReason: "MAX_TOKENS", delayMs: 5 },
    ]);
    const ai = client(session);
    const limited = await failure(streamed(ai, hello));
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.message)).toEqual({ error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } });

    const seen: string[] = [];
    const dropped = failure(
      (async () => {
        for await (const chunk of await ai.models.generateContentStream(hello)) seen.push(chunk.text ?? "");
      })(),
    );
    expect(await dropped).toBeInstanceOf(Error);
    expect(seen).toHaveLength(1);

    const chunks = await streamed(ai, hello);
    expect(chunks[chunks.length - 1].candidates?.[0]?.finishReason).toBe("MAX_TOKENS");
    expect(await requests(session)).toHaveLength(3);
  });

  it("answers only under its token; CORS headers and preflights unless a session turns them off; reset forgets", async () => {
    const session = freshSession();
    const outside = await fetch(`${url.replace(token, "not-the-token-0123456789")}/${session}/v1beta/models`, { headers: { "x-goog-api-key": "k" } });
    expect(outside.status).toBe(404);
    expect(outside.headers.get("access-control-allow-origin")).toBe("*");
    expect(((await outside.json()) as { error: { status: string } }).error.status).toBe("NOT_FOUND");

    const preflight = await fetch(`${url}/${session}/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:5173", "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-goog-api-key,x-goog-api-client" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type,x-goog-api-key,x-goog-api-client");
    expect(preflight.headers.get("cross-origin-resource-policy")).toBe("cross-origin");

    await configure(session, { cors: false });
    const closed = await fetch(`${url}/${session}/v1beta/models`, { headers: { "x-goog-api-key": "k" } });
    expect(closed.status).toBe(200);
    expect(closed.headers.get("access-control-allow-origin")).toBeNull();
    expect(closed.headers.get("cross-origin-resource-policy")).toBeNull();

    await script(session, [{ parts: [{ text: "Queued." }] }]);
    await post(session, "{");
    expect(await requests(session)).toHaveLength(1);
    await control("reset", { session });
    expect(await requests(session)).toEqual([]);
    const fresh = await post(session, { contents: [user("a")] });
    expect(JSON.stringify(fresh.json)).toContain("(no scripted reply)");
  });
});
