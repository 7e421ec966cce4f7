import type { RunResult, WorkerEvent } from "../../workers/python-api";
import { applyEvent, applyResult } from "../runtime/output-model";
import { streamMessage, ProviderError, type ProviderSettings } from "../providers/anthropic/client";
import { toApiMessages } from "./history";
import { codeOf, PYTHON_TOOL_NAME, pythonTool, toolResult } from "./python-tool";
import type { CellRecord, ChatMessage, TextBlock, ToolUseBlock, Usage } from "./types";

/** Tool rounds one message may take before Kiln stops and says so. */
export const MAX_TOOL_ROUNDS = 12;

const SYSTEM_PROMPT =
  "You are Kiln, a data analysis assistant. You can run Python in the person's browser with the `python` tool; " +
  "use it to compute, check and plot rather than guessing. Keep answers short and show the key numbers.";

export interface TurnContext {
  conversationId: string;
  /** Everything so far, ending with the person's message. Grows as the turn goes on. */
  history: ChatMessage[];
  provider: ProviderSettings;
  /** Runs a tool call's code: in the browser, or on Anthropic's sandbox when it must. */
  runCode: (code: string, onEvent: (event: WorkerEvent) => void) => Promise<RunResult>;
  pythonVersion: string;
  /** Whether this conversation's Python may use the network. */
  pythonNetwork: boolean;
  signal: AbortSignal;
  nextSeq: () => number;
  /** A message was added or changed: show it and save it. `final` when it will not change again. */
  update: (message: ChatMessage, final: boolean) => void;
  /** Shown while waiting to retry an overloaded or rate-limited request. */
  onRetry: (text: string) => void;
  /** Tokens used by each answer. */
  onUsage: (usage: Usage) => void;
}

const newId = () => crypto.randomUUID();

/** Claude answers, running its Python calls in the session, until it ends its turn. */
export async function runTurn(ctx: TurnContext): Promise<void> {
  const tools = [pythonTool(ctx.pythonVersion, ctx.pythonNetwork)];
  for (let round = 0; ; round++) {
    const assistant: ChatMessage = {
      id: newId(),
      conversationId: ctx.conversationId,
      seq: ctx.nextSeq(),
      role: "assistant",
      content: [],
      status: "streaming",
      createdAt: Date.now(),
    };
    if (round >= MAX_TOOL_ROUNDS) {
      assistant.status = "error";
      assistant.error = `Stopped after ${MAX_TOOL_ROUNDS} rounds of Python in one answer. Send a message to let Claude continue.`;
      ctx.update(assistant, true);
      return;
    }
    ctx.update(assistant, false);
    const blocks: (TextBlock | ToolUseBlock)[] = [];
    let reply;
    try {
      reply = await streamMessage(ctx.provider, {
        system: SYSTEM_PROMPT,
        messages: toApiMessages(ctx.history),
        tools,
        signal: ctx.signal,
        onEvent: (event) => {
          if (event.type === "retry") {
            ctx.onRetry(`${event.reason} Retrying in ${Math.round(event.delayMs / 1000)} s (attempt ${event.attempt})…`);
            return;
          }
          if (event.type === "text") {
            const block = blocks[event.index];
            if (block?.type === "text") block.text += event.text;
            else blocks[event.index] = { type: "text", text: event.text };
          } else {
            blocks[event.index] = event.block;
          }
          assistant.content = blocks.filter(Boolean).map((b) => ({ ...b }));
          ctx.update(assistant, false);
        },
      });
    } catch (cause) {
      const error = cause instanceof ProviderError ? cause : new ProviderError(String(cause), "network");
      assistant.content = (error.partial.length ? error.partial : blocks).filter((b) => b.type === "text");
      assistant.status = error.kind === "aborted" ? "stopped" : "error";
      if (error.kind !== "aborted") assistant.error = error.message;
      ctx.update(assistant, true);
      return;
    }
    ctx.onRetry("");
    assistant.content = reply.content;
    assistant.status = "done";
    assistant.usage = reply.usage;
    ctx.onUsage(reply.usage);
    ctx.update(assistant, true);
    ctx.history.push(assistant);
    if (reply.stopReason === "pause_turn") continue;
    if (reply.stopReason !== "tool_use") return;
    await runToolCalls(ctx, reply.content.filter((b): b is ToolUseBlock => b.type === "tool_use"));
    if (ctx.signal.aborted) return;
  }
}

async function runToolCalls(ctx: TurnContext, calls: ToolUseBlock[]): Promise<void> {
  const results: ChatMessage = {
    id: newId(),
    conversationId: ctx.conversationId,
    seq: ctx.nextSeq(),
    role: "user",
    content: [],
    cells: [],
    createdAt: Date.now(),
  };
  const show = (final: boolean) => ctx.update({ ...results, cells: results.cells!.map((c) => ({ ...c })) }, final);
  for (const call of calls) {
    const code = codeOf(call.input);
    const cell: CellRecord = { toolUseId: call.id, code: code ?? "", outputs: [], status: "running" };
    results.cells!.push(cell);
    if (call.name !== PYTHON_TOOL_NAME || code === undefined || ctx.signal.aborted) {
      const why = ctx.signal.aborted ? "Not run: the person pressed Stop." : `Unknown tool or input: ${call.name}`;
      cell.status = "error";
      cell.outputs = [{ kind: "notice", tone: "warning", text: why }];
      results.content.push({ type: "tool_result", tool_use_id: call.id, content: [{ type: "text", text: why }], is_error: true });
      continue;
    }
    show(false);
    const result = await ctx.runCode(code, (event) => {
      cell.outputs = applyEvent(cell.outputs, event);
      show(false);
    });
    cell.outputs = applyResult(cell.outputs, result);
    cell.status = result.status;
    cell.durationMs = result.durationMs;
    if (result.sandbox) cell.sandbox = result.sandbox;
    results.content.push(toolResult(call.id, cell.outputs, result));
  }
  show(true);
  ctx.history.push(results);
}
