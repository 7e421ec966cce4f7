import { describe, expect, it } from "vitest";
import { toMarkdown, toNotebook } from "./export";
import type { ChatMessage, Conversation } from "../model/conversation";

const KEY = "sk-ant-api03-Secret_Key-1234567890";

describe("export", () => {
  it("an export of a conversation made with a saved key contains no key", () => {
    const conversation: Conversation = { id: "c1", title: "Sums", createdAt: 1, updatedAt: 2, usage: { inputTokens: 3, outputTokens: 4 } };
    const base = { conversationId: conversation.id, createdAt: 1 };
    const messages: ChatMessage[] = [
      { ...base, id: "m1", seq: 0, role: "user", content: [{ type: "text", text: "Add 1 and 2." }] },
      {
        ...base,
        id: "m2",
        seq: 1,
        role: "assistant",
        status: "done",
        content: [
          { type: "text", text: "Running it." },
          { type: "tool_call", id: "t1", name: "python", input: { code: "print(1 + 2)" } },
        ],
        usage: { inputTokens: 3, outputTokens: 4 },
      },
      {
        ...base,
        id: "m3",
        seq: 2,
        role: "user",
        content: [{ type: "tool_result", callId: "t1", content: [{ type: "text", text: "3\n" }] }],
        cells: [{ toolUseId: "t1", code: "print(1 + 2)", outputs: [{ kind: "stream", name: "stdout", text: "3\n" }], status: "ok" }],
      },
      // An error stored by an older version, before provider errors were redacted.
      { ...base, id: "m4", seq: 3, role: "assistant", status: "error", content: [], error: `The API failed (500): key ${KEY}` },
    ];
    const markdown = toMarkdown(conversation, messages);
    const notebook = toNotebook(messages, { html: (html) => html, svg: (svg) => svg });
    expect(markdown).toContain("3");
    expect(JSON.parse(notebook).cells).toHaveLength(3);
    for (const text of [markdown, notebook]) expect(text).not.toContain(KEY);
  });

  it("code and output holding a fence stay inside their own block", () => {
    const conversation: Conversation = { id: "c2", title: "Fences", createdAt: 1, updatedAt: 2, usage: { inputTokens: 0, outputTokens: 0 } };
    const code = 'print("```\\n# not a heading")';
    const messages: ChatMessage[] = [
      {
        conversationId: "c2",
        createdAt: 1,
        id: "m0",
        seq: 0,
        role: "assistant",
        status: "done",
        content: [{ type: "tool_call", id: "t1", name: "python", input: { code } }],
      },
      {
        conversationId: "c2",
        createdAt: 1,
        id: "m1",
        seq: 1,
        role: "user",
        content: [{ type: "tool_result", callId: "t1", content: [{ type: "text", text: "```\n# not a heading\n" }] }],
        cells: [{ toolUseId: "t1", code, outputs: [{ kind: "stream", name: "stdout", text: "```\n# not a heading\n" }], status: "ok" }],
      },
    ];
    const markdown = toMarkdown(conversation, messages);
    expect(markdown).toContain("````python\n" + code + "\n````");
    expect(markdown).toContain("````\n```\n# not a heading\n");
  });
});
