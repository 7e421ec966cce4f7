import { describe, expect, it } from "vitest";
import { fenced, toMarkdown, toNotebook } from "./export";
import type { ChatMessage, Conversation } from "../model/conversation";
import type { MimeBundle } from "../../workers/python-api";

/** A cleaner that keeps everything as it is (what the real one does is tested in src/components/output-cleaner.test.ts). */
const asIs = { bundle: (data: MimeBundle) => data, markdown: (text: string) => text };

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
    const markdown = toMarkdown(conversation, messages, asIs);
    const notebook = toNotebook(conversation, messages, asIs);
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
    const markdown = toMarkdown(conversation, messages, asIs);
    expect(markdown).toContain("````python\n" + code + "\n````");
    expect(markdown).toContain("````\n```\n# not a heading\n");
  });

  it("text with hundreds of thousands of backtick runs is fenced, not a stack overflow", () => {
    const text = "`a".repeat(300_000) + "````";
    expect(() => Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length))).toThrow(RangeError);
    const block = fenced(text);
    expect(block.startsWith("`````\n")).toBe(true);
    expect(block.endsWith("\n`````")).toBe(true);
  });

  it("every text and every output bundle goes through the cleaner, in both exports", () => {
    const conversation: Conversation = { id: "c3", title: "Title", createdAt: 1, updatedAt: 2, usage: { inputTokens: 0, outputTokens: 0 } };
    const base = { conversationId: "c3", createdAt: 1 };
    const messages: ChatMessage[] = [
      { ...base, id: "m0", seq: 0, role: "user", content: [{ type: "text", text: "Question" }] },
      {
        ...base,
        id: "m1",
        seq: 1,
        role: "assistant",
        status: "done",
        content: [{ type: "text", text: "Answer" }, { type: "tool_call", id: "t1", name: "python", input: { code: "show()" } }],
      },
      {
        ...base,
        id: "m2",
        seq: 2,
        role: "user",
        content: [{ type: "tool_result", callId: "t1", content: [{ type: "text", text: "" }] }],
        cells: [
          {
            toolUseId: "t1",
            code: "show()",
            status: "ok",
            outputs: [
              { kind: "display", data: { "text/plain": "shown", "application/json": '{"a": [1]}' } },
              { kind: "value", data: { "text/plain": "value" } },
            ],
          },
        ],
      },
    ];
    const marking = {
      bundle: (data: MimeBundle) => ({ ...data, "text/plain": `cleaned ${data["text/plain"]}` }),
      markdown: (text: string) => `cleaned ${text}`,
    };
    const markdown = toMarkdown(conversation, messages, marking);
    expect(markdown).toContain("cleaned # Title");
    expect(markdown).toContain("cleaned **You:** Question");
    expect(markdown).toContain("cleaned Answer");
    expect(markdown).toContain("cleaned shown\ncleaned value");
    const notebook = JSON.parse(toNotebook(conversation, messages, marking));
    expect(notebook.cells.map((cell: { source: string[] }) => cell.source.join(""))).toEqual(["cleaned **You asked:**\n\n> Question", "cleaned Answer", "show()"]);
    expect(notebook.cells[2].outputs.map((output: { data: unknown }) => output.data)).toEqual([
      // JSON stays JSON in the notebook.
      { "text/plain": ["cleaned shown"], "application/json": { a: [1] } },
      { "text/plain": ["cleaned value"] },
    ]);
  });
});
