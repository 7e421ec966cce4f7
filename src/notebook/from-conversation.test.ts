// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { validateWithNbformat } from "../../e2e/support/nbformat";
import type { ChatMessage, Conversation } from "../model/conversation";
import type { OutputItem } from "../model/output";
import { notebookFromConversation } from "./from-conversation";
import { readIpynb, writeIpynb } from "./ipynb";

const conversation: Conversation = { id: "c", title: "Monthly sales", createdAt: 1, updatedAt: 2, usage: { inputTokens: 0, outputTokens: 0 } };
const base = { conversationId: "c", createdAt: 1 };
const first: OutputItem[] = [{ kind: "stream", name: "stdout", text: "loaded 12 rows\n" }, { kind: "value", data: { "text/plain": "12" } }];
const second: OutputItem[] = [{ kind: "error", error: { ename: "KeyError", evalue: "'march'", traceback: "KeyError: 'march'" } }];

const messages: ChatMessage[] = [
  { ...base, id: "m0", seq: 0, role: "user", content: [{ type: "text", text: "How many rows?\nAnd which months?" }] },
  {
    ...base,
    id: "m1",
    seq: 1,
    role: "assistant",
    content: [
      { type: "text", text: "Let me count them. ![tracker](https://evil.example/p.png)" },
      { type: "tool_call", id: "t1", name: "python", input: { code: "len(rows)" } },
    ],
  },
  { ...base, id: "m2", seq: 2, role: "user", content: [{ type: "tool_result", callId: "t1", content: [] }], cells: [{ toolUseId: "t1", code: "print('loaded 12 rows')\nlen(rows)", outputs: first, status: "ok" }] },
  {
    ...base,
    id: "m3",
    seq: 3,
    role: "assistant",
    content: [
      { type: "tool_call", id: "t2", name: "python", input: { code: "rows['march']" } },
      { type: "tool_call", id: "never-ran", name: "python", input: { code: "cut off" } },
    ],
  },
  { ...base, id: "m4", seq: 4, role: "user", content: [{ type: "tool_result", callId: "t2", content: [] }], cells: [{ toolUseId: "t2", code: "rows['march']", outputs: second, status: "error" }] },
  { ...base, id: "m5", seq: 5, role: "assistant", content: [{ type: "text", text: "There are **12** rows." }] },
];

describe("notebookFromConversation", () => {
  it("makes the cells the model ran, in order, with outputs and counts, between the messages as Markdown", () => {
    const nb = notebookFromConversation(conversation, messages);
    expect(nb.title).toBe("Monthly sales");
    expect(nb.cells.map(({ kind, source, outputs, executionCount }) => ({ kind, source, outputs, executionCount }))).toEqual([
      { kind: "markdown", source: "**You asked:**\n\n> How many rows?\n> And which months?", outputs: [], executionCount: null },
      { kind: "markdown", source: "Let me count them. [Image: tracker](<https://evil.example/p.png>)", outputs: [], executionCount: null },
      { kind: "code", source: "print('loaded 12 rows')\nlen(rows)", outputs: first, executionCount: 1 },
      { kind: "code", source: "rows['march']", outputs: second, executionCount: 2 },
      { kind: "markdown", source: "There are **12** rows.", outputs: [], executionCount: null },
    ]);
    expect(new Set(nb.cells.map((cell) => cell.id)).size).toBe(5);
  });

  it("gives a notebook that downloads as a valid nbformat file and reads back", () => {
    const text = writeIpynb(notebookFromConversation(conversation, messages));
    validateWithNbformat(text);
    const back = readIpynb(text, "Monthly sales");
    expect(back.cells[2].outputs).toEqual(first);
    expect(back.cells[3].outputs).toEqual(second);
  });
});
