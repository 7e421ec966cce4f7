import { describe, expect, it } from "vitest";
import { toTurnMessages } from "./history";
import type { ChatMessage, ContentBlock } from "../model/conversation";

const toApiMessages = (history: ChatMessage[]) => toTurnMessages(history, "anthropic");

let seq = 0;
const message = (role: "user" | "assistant", content: ContentBlock[], status?: ChatMessage["status"]): ChatMessage => ({
  id: `m${++seq}`,
  conversationId: "c",
  seq,
  role,
  content,
  status,
  createdAt: 0,
});
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const call: ContentBlock = { type: "tool_call", id: "t1", name: "python", input: { code: "1" } };
const result: ContentBlock = { type: "tool_result", callId: "t1", content: [text("ok") as { type: "text"; text: string }] };

describe("toTurnMessages", () => {
  it("leaves failed answers out so roles alternate", () => {
    const api = toApiMessages([message("user", [text("hi")]), message("assistant", [text("par")], "error"), message("user", [text("again")])]);
    expect(api).toEqual([{ role: "user", content: [text("hi"), text("again")] }]);
  });

  it("keeps a stopped answer's text, not its unfinished tool calls", () => {
    const api = toApiMessages([message("user", [text("hi")]), message("assistant", [text("so far"), call], "stopped")]);
    expect(api).toEqual([
      { role: "user", content: [text("hi")] },
      { role: "assistant", content: [text("so far")] },
    ]);
  });

  it("answers a tool call whose run never finished, before the person's next words", () => {
    const api = toApiMessages([message("user", [text("go")]), message("assistant", [call], "done"), message("user", [text("and?")])]);
    expect(api[2].role).toBe("user");
    expect(api[2].content[0]).toMatchObject({ type: "tool_result", callId: "t1", isError: true });
    expect(api[2].content[1]).toEqual(text("and?"));
  });

  it("passes a complete tool round through unchanged", () => {
    const history = [message("user", [text("go")]), message("assistant", [call], "done"), message("user", [result])];
    expect(toApiMessages(history).map((m) => m.content)).toEqual([[text("go")], [call], [result]]);
  });

  it("gives each provider its own blocks and every other provider their text", () => {
    const thinking: ContentBlock = { type: "provider", provider: "anthropic", data: { type: "thinking", thinking: "hm", signature: "s" }, text: "" };
    const search: ContentBlock = { type: "provider", provider: "anthropic", data: { type: "server_tool_use" }, text: "[searched]" };
    const history = [message("user", [text("go")]), message("assistant", [thinking, search, text("done")], "done")];
    expect(toTurnMessages(history, "anthropic")[1].content).toEqual([thinking, search, text("done")]);
    expect(toTurnMessages(history, "openai-compatible")[1].content).toEqual([text("[searched]"), text("done")]);
  });
});
