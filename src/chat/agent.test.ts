import { describe, expect, it } from "vitest";
import type { ChatMessage, ContentBlock, ToolCallBlock } from "../model/conversation";
import { runTurn, type TurnContext } from "./agent";
import type { Provider, TurnReply, TurnRequest } from "./provider";
import { toolResult } from "./python-tool";

const question: ChatMessage = {
  id: "q",
  conversationId: "c",
  seq: 1,
  role: "user",
  content: [{ type: "text", text: "Plot it." }],
  createdAt: 0,
};

/** A turn against a provider that gives `replies` in order; what was shown last of each message, and what ran. */
async function turn(replies: TurnReply[]) {
  const requests: TurnRequest[] = [];
  const ran: string[] = [];
  const shown = new Map<string, ChatMessage>();
  const provider: Provider = {
    id: "test",
    label: "Gemini",
    listModels: async () => [],
    streamTurn: async (request) => {
      requests.push(request);
      const reply = replies.shift();
      if (!reply) throw new Error("no more replies");
      return reply;
    },
  };
  let seq = 1;
  const ctx: TurnContext = {
    conversationId: "c",
    history: [question],
    provider,
    model: "m",
    maxTokens: 256,
    runCode: async (code) => {
      ran.push(code);
      return { status: "ok", durationMs: 1 };
    },
    pythonVersion: "3.14",
    pythonNetwork: false,
    signal: new AbortController().signal,
    nextSeq: () => ++seq,
    update: (message) => shown.set(message.id, structuredClone(message)),
    onRetry: () => {},
    onUsage: () => {},
  };
  await runTurn(ctx);
  return { requests, ran, messages: [...shown.values()] };
}

const usage = { inputTokens: 1, outputTokens: 1 };
const text = (value: string): ContentBlock => ({ type: "text", text: value });
const call = (input: unknown, invalidInput?: string): ToolCallBlock => ({
  type: "tool_call",
  id: "call_1",
  name: "python",
  input,
  ...(invalidInput === undefined ? {} : { invalidInput }),
});

describe("an answer that ends before it is finished says so", () => {
  it("an answer cut at the output limit is shown with a notice that names the limit and the setting", async () => {
    const { messages } = await turn([{ content: [text("The mean is")], finish: "max_tokens", usage }]);
    expect(messages).toHaveLength(1);
    expect(messages[0].status).toBe("done");
    expect(messages[0].notice).toBe(
      "Cut off: the answer reached the limit of 256 output tokens. Raise Max output tokens in Settings, or ask the model to go on.",
    );
  });

  it("a tool call cut at the output limit is not run, tells the model why, and the turn ends there", async () => {
    const cut = '{"code": "import statistics\\nprint(statis';
    const { requests, ran, messages } = await turn([
      { content: [text("Computing."), call({}, cut)], finish: "max_tokens", usage },
      { content: [text("should not be asked for")], finish: "end", usage },
    ]);
    expect(ran).toEqual([]);
    expect(requests).toHaveLength(1);
    const [answer, results] = messages;
    expect(answer.notice).toMatch(/^Cut off: the answer reached the limit of 256 output tokens/);
    const why = "Not run: the answer reached its output token limit before this call's code was complete.";
    expect(results.cells?.[0]).toMatchObject({ status: "error", outputs: [{ kind: "notice", text: why }] });
    expect(results.content).toEqual([{ type: "tool_result", callId: "call_1", content: [{ type: "text", text: why }], isError: true }]);
  });

  it("a whole tool call in an answer that reached the limit still runs, and the model goes on", async () => {
    const { requests, ran, messages } = await turn([
      { content: [call({ code: "print(1)" })], finish: "max_tokens", usage },
      { content: [text("It printed 1.")], finish: "end", usage },
    ]);
    expect(ran).toEqual(["print(1)"]);
    expect(requests).toHaveLength(2);
    // Not said to be cut off: the answer went on.
    expect(messages[0].notice).toBeUndefined();
    expect(messages[messages.length - 1].content).toEqual([text("It printed 1.")]);
  });

  it("an answer the provider ended for its own reason names the provider and the reason", async () => {
    const { messages } = await turn([{ content: [text("Here is")], finish: "refusal", finishDetail: "SAFETY", usage }]);
    expect(messages[0].notice).toBe("The answer ended early: Gemini gave the reason SAFETY.");
    const declined = await turn([{ content: [], finish: "refusal", usage }]);
    expect(declined.messages[0].notice).toBe("The model declined to go on with this answer.");
  });

  it("a finished answer has no notice", async () => {
    const { messages } = await turn([{ content: [text("Done.")], finish: "end", usage }]);
    expect(messages[0].notice).toBeUndefined();
  });
});

describe("toolResult", () => {
  it("tells the model of outputs a run dropped past its limit", () => {
    const result = toolResult("call_1", { outcome: { status: "ok", durationMs: 3 }, events: [], droppedOutputs: 19_000 });
    expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("[19000 more outputs not shown: a run shows at most 1000.]") });
  });
});
