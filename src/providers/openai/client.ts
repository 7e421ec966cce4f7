import type { ResponseOutputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import type { TextBlock, ToolCallBlock, Usage } from "../../model/conversation";
import { ProviderError, type TurnReply, type TurnRequest } from "../../chat/provider";
import { withRetries } from "../../chat/retry";
import { describeFailure, sdkClient, type FailureWords, type ServerSettings } from "../openai-compatible/client";
import { fromOutputItem, functionCall, toFunctionTool, toInputItems } from "./wire";

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

export const WORDS: FailureWords = {
  server: "OpenAI's API",
  unreachable:
    "Could not reach OpenAI's API. Either the network is down, or OpenAI answered with an error that the browser " +
    "hides (error responses without CORS headers look like this): check the API key, the model name and your " +
    "organization's access, then retry.",
};

export const client = (settings: ServerSettings) => sdkClient(settings, DEFAULT_BASE_URL);

/** Model ids the key can use. */
export async function listModels(settings: ServerSettings, signal?: AbortSignal): Promise<string[]> {
  try {
    const page = await (await client(settings)).api.models.list({ signal });
    return page.data.map((model) => model.id);
  } catch (cause) {
    throw describeFailure(cause, [], settings.apiKey, WORDS);
  }
}

/** One assistant turn through the Responses API, streamed; nothing kept on OpenAI's side. */
export function streamResponse(settings: ServerSettings, request: TurnRequest): Promise<TurnReply> {
  return withRetries(() => streamOnce(settings, request), request.signal, (retry) => request.onEvent({ type: "retry", ...retry }));
}

async function streamOnce(settings: ServerSettings, request: TurnRequest): Promise<TurnReply> {
  /** Streamed so far, by output index: text as it comes, function calls as their arguments come. */
  const shown: (TextBlock | ToolCallBlock | undefined)[] = [];
  const args: string[] = [];
  const partial = () => shown.filter((b): b is TextBlock => b?.type === "text" && Boolean(b.text));
  let done: { output: ResponseOutputItem[]; usage: Usage; incomplete?: string } | undefined;
  try {
    const stream = await (await client(settings)).api.responses.create(
      {
        model: request.model,
        instructions: request.system,
        input: toInputItems(request.messages),
        tools: request.tools.map(toFunctionTool),
        max_output_tokens: request.maxTokens,
        store: false,
        include: ["reasoning.encrypted_content"],
        stream: true,
      },
      { signal: request.signal },
    );
    for await (const event of stream as AsyncIterable<ResponseStreamEvent>) {
      switch (event.type) {
        case "response.output_item.added":
          if (event.item.type === "function_call") args[event.output_index] = "";
          break;
        case "response.output_text.delta": {
          const block = shown[event.output_index];
          if (block?.type === "text") block.text += event.delta;
          else shown[event.output_index] = { type: "text", text: event.delta };
          request.onEvent({ type: "text", index: event.output_index, text: event.delta });
          break;
        }
        case "response.function_call_arguments.delta":
          args[event.output_index] = (args[event.output_index] ?? "") + event.delta;
          break;
        case "response.output_item.done":
          if (event.item.type === "function_call") {
            const block = functionCall(event.item.call_id, event.item.name, event.item.arguments ?? args[event.output_index] ?? "");
            shown[event.output_index] = block;
            request.onEvent({ type: "block", index: event.output_index, block });
          }
          break;
        case "response.completed":
        case "response.incomplete": {
          const usage = event.response.usage;
          done = {
            output: event.response.output,
            usage: { inputTokens: usage?.input_tokens ?? 0, outputTokens: usage?.output_tokens ?? 0 },
            ...(event.type === "response.incomplete" ? { incomplete: event.response.incomplete_details?.reason ?? "max_output_tokens" } : {}),
          };
          break;
        }
        case "response.failed":
          throw new ProviderError(`OpenAI's API could not answer: ${event.response.error?.message ?? "the response failed"}`, "server", partial());
        case "error":
          throw new ProviderError(`OpenAI's API reported an error: ${event.message}`, "server", partial());
      }
    }
  } catch (cause) {
    throw cause instanceof ProviderError ? cause : describeFailure(cause, partial(), settings.apiKey, WORDS);
  }
  if (request.signal.aborted) throw new ProviderError("Stopped.", "aborted", partial());
  if (!done) throw new ProviderError("The connection to OpenAI's API was lost mid-answer.", "network", partial());
  const content = done.output.flatMap((item) => fromOutputItem(item) ?? []);
  const calls = content.some((b) => b.type === "tool_call");
  if (done.incomplete === "content_filter") return { content, finish: "refusal", finishDetail: done.incomplete, usage: done.usage };
  return { content, finish: done.incomplete ? "max_tokens" : calls ? "tool_calls" : "end", usage: done.usage };
}
