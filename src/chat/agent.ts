import type { WorkerEvent } from "../../workers/python-api";
import type { CellRecord, ChatMessage, ContentBlock, TextBlock, ToolCallBlock, Usage } from "../model/conversation";
import type { RunOutcome } from "../model/output";
import { RunOwner } from "../runtime/run-owner";
import { toTurnMessages } from "./history";
import { ProviderError, type Provider } from "./provider";
import { codeOf, PYTHON_TOOL_NAME, pythonTool, toolResult } from "./python-tool";

/** Tool rounds one message may take before Kiln stops and says so. */
export const MAX_TOOL_ROUNDS = 12;

const SYSTEM_PROMPT =
  "You are Kiln, a data analysis assistant. You can run Python in the person's browser with the `python` tool; " +
  "use it to compute, check and plot rather than guessing. Keep answers short and show the key numbers.";

export interface TurnContext {
  conversationId: string;
  /** Everything so far, ending with the person's message. Grows as the turn goes on. */
  history: ChatMessage[];
  provider: Provider;
  model: string;
  maxTokens: number;
  /** Runs a tool call's code: in the browser, or on the provider's sandbox when it must. */
  runCode: (code: string, signal: AbortSignal, onEvent: (event: WorkerEvent) => void) => Promise<RunOutcome>;
  pythonVersion: string;
  /** Whether this conversation's Python may use the network. */
  pythonNetwork: boolean;
  /** The person's Jupyter server, when one is set: its name and the modules it has (when it told them). */
  jupyter?: { label: string; modules?: readonly string[] };
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

/** Python written in an answer's text, as a fenced block. */
const FENCED_PYTHON = /```(?:python|py)\s*\n/i;

/** The model answers, its Python calls running in the session, until it ends its turn. */
export async function runTurn(ctx: TurnContext): Promise<void> {
  const tools = [pythonTool(ctx.pythonVersion, ctx.pythonNetwork, ctx.provider.sandbox, ctx.jupyter)];
  const author = { provider: ctx.provider.id, model: ctx.model };
  for (let round = 0; ; round++) {
    const assistant: ChatMessage = {
      id: newId(),
      conversationId: ctx.conversationId,
      seq: ctx.nextSeq(),
      role: "assistant",
      content: [],
      status: "streaming",
      author,
      createdAt: Date.now(),
    };
    if (round >= MAX_TOOL_ROUNDS) {
      assistant.status = "error";
      assistant.error = `Stopped after ${MAX_TOOL_ROUNDS} rounds of Python in one answer. Send a message to let the model continue.`;
      ctx.update(assistant, true);
      return;
    }
    ctx.update(assistant, false);
    const blocks: (TextBlock | ToolCallBlock)[] = [];
    let reply;
    try {
      reply = await ctx.provider.streamTurn({
        model: ctx.model,
        system: SYSTEM_PROMPT,
        messages: toTurnMessages(ctx.history, ctx.provider.id),
        tools,
        maxTokens: ctx.maxTokens,
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
    const calls = reply.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
    assistant.content = reply.content;
    assistant.status = "done";
    assistant.usage = reply.usage;
    const cut = reply.finish === "max_tokens";
    // Whole calls in a cut answer run, and the model goes on: only an answer that ends here is said to be cut off.
    const endsCut = cut && (!calls.length || calls.some((call) => call.invalidInput !== undefined));
    if (endsCut) {
      assistant.notice =
        `Cut off: the answer reached the limit of ${ctx.maxTokens} output tokens. Raise Max output tokens in Settings, ` +
        "or ask the model to go on.";
    } else if (reply.finish === "refusal") {
      assistant.notice = reply.finishDetail
        ? `The answer ended early: ${ctx.provider.label} gave the reason ${reply.finishDetail}.`
        : "The model declined to go on with this answer.";
    } else if (!calls.length && reply.content.some((b) => b.type === "text" && FENCED_PYTHON.test(b.text))) {
      assistant.notice =
        "The model wrote Python in its answer instead of calling the python tool, so nothing ran. Ask it to run the " +
        "code, or choose a model that supports tool calling.";
    }
    ctx.onUsage(reply.usage);
    ctx.update(assistant, true);
    ctx.history.push(assistant);
    if (reply.finish === "continue") continue;
    if (reply.finish !== "tool_calls" && !calls.length) return;
    await runToolCalls(ctx, calls, cut);
    if (ctx.signal.aborted) return;
    // A call cut short would most likely be cut again: the person decides whether to go on.
    if (endsCut) return;
  }
}

/** Why a tool call cannot run, or undefined when it can. */
function refusal(call: ToolCallBlock, signal: AbortSignal, cut: boolean): string | undefined {
  if (signal.aborted) return "Not run: the person pressed Stop.";
  if (call.name !== PYTHON_TOOL_NAME) return `Not run: there is no tool named ${call.name}; the only tool is ${PYTHON_TOOL_NAME}.`;
  if (call.invalidInput !== undefined && cut) {
    return "Not run: the answer reached its output token limit before this call's code was complete.";
  }
  if (call.invalidInput !== undefined) {
    const shown = call.invalidInput.length > 200 ? `${call.invalidInput.slice(0, 200)}…` : call.invalidInput;
    return `Not run: the model's arguments for the ${PYTHON_TOOL_NAME} tool were not valid JSON: ${shown}`;
  }
  if (codeOf(call.input) === undefined) return `Not run: the ${PYTHON_TOOL_NAME} tool needs a string argument "code".`;
  return undefined;
}

async function runToolCalls(ctx: TurnContext, calls: ToolCallBlock[], cut: boolean): Promise<void> {
  const cells: CellRecord[] = [];
  const content: ContentBlock[] = [];
  const results: ChatMessage = {
    id: newId(),
    conversationId: ctx.conversationId,
    seq: ctx.nextSeq(),
    role: "user",
    content,
    cells,
    createdAt: Date.now(),
  };
  const show = (final: boolean) => ctx.update({ ...results, cells: cells.map((c) => ({ ...c })) }, final);
  for (const call of calls) {
    const code = codeOf(call.input) ?? "";
    const cell: CellRecord = { toolUseId: call.id, code, outputs: [], status: "running" };
    cells.push(cell);
    const why = refusal(call, ctx.signal, cut);
    if (why) {
      cell.status = "error";
      cell.outputs = [{ kind: "notice", tone: "warning", text: why }];
      content.push({ type: "tool_result", callId: call.id, content: [{ type: "text", text: why }], isError: true });
      continue;
    }
    show(false);
    const owner = new RunOwner();
    const unsubscribe = owner.subscribe(() => {
      cell.outputs = owner.current.outputs;
      show(false);
    });
    const stop = () => owner.stop();
    ctx.signal.addEventListener("abort", stop);
    try {
      const finished = await owner.run((signal, onEvent) => ctx.runCode(code, signal, onEvent));
      cell.outputs = finished.outputs;
      cell.status = finished.outcome.status;
      cell.durationMs = finished.outcome.durationMs;
      if (finished.outcome.ranOn) cell.ranOn = finished.outcome.ranOn;
      content.push(toolResult(call.id, finished));
    } finally {
      ctx.signal.removeEventListener("abort", stop);
      unsubscribe();
    }
  }
  show(true);
  ctx.history.push(results);
}
