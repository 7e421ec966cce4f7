import { describe, expect, it } from "vitest";
import { toApiMessages } from "./history";
import type { ChatMessage, ContentBlock } from "./types";

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
const call: ContentBlock = { type: "tool_use", id: "t1", name: "python", input: { code: "1" } };
const result: ContentBlock = { type: "tool_result", tool_use_id: "t1", content: [text("ok") as { type: "text"; text: string }] };

describe("toApiMessages", () => {
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
    expect(api[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "t1", is_error: true });
    expect(api[2].content[1]).toEqual(text("and?"));
  });

  it("passes a complete tool round through unchanged", () => {
    const history = [message("user", [text("go")]), message("assistant", [call], "done"), message("user", [result])];
    expect(toApiMessages(history).map((m) => m.content)).toEqual([[text("go")], [call], [result]]);
  });
});
