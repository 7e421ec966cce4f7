import type { Provider, ProviderKind } from "../../chat/provider";
import { DEFAULT_BASE_URL, listModels, streamMessage, type ProviderSettings } from "./client";
import { anthropicSandbox, SANDBOX_LABEL } from "./sandbox-backend";
import { finishReason, fromApiBlock, PROVIDER_ID, toApiMessages, toApiTool } from "./wire";

/** Output tokens of a sandbox run's request (the runner's output comes back in the tool result, not in tokens). */
const SANDBOX_MAX_TOKENS = 4096;

/** Code execution tool versions the API knows, newest first. */
const SANDBOX_TOOLS = ["code_execution_20260521", "code_execution_20260120", "code_execution_20250825", "code_execution_20250522"];

/** Claude, through Anthropic's Messages API. */
export const anthropic: ProviderKind = {
  id: PROVIDER_ID,
  label: "Anthropic",
  defaultBaseUrl: DEFAULT_BASE_URL,
  defaultModel: "claude-sonnet-5-5",
  keyHint: "sk-ant-…",
  keyOptional: false,
  sandbox: { label: SANDBOX_LABEL, tools: SANDBOX_TOOLS },
  configured: (config) => Boolean(config.apiKey.trim()),
  create(config, sandboxStore): Provider {
    const settings = (model: string): ProviderSettings => ({ apiKey: config.apiKey, baseUrl: config.baseUrl, model, maxTokens: SANDBOX_MAX_TOKENS });
    return {
      id: PROVIDER_ID,
      label: "Anthropic",
      async streamTurn(request) {
        const reply = await streamMessage(
          { ...settings(request.model), maxTokens: request.maxTokens },
          {
            system: request.system,
            messages: toApiMessages(request.messages),
            tools: request.tools.map(toApiTool),
            signal: request.signal,
            onEvent: request.onEvent,
          },
        );
        const content = reply.blocks.map(fromApiBlock).map((block) => {
          const sent = block.type === "tool_call" ? reply.invalidInputs[block.id] : undefined;
          return sent === undefined ? block : { ...block, invalidInput: sent };
        });
        return { content, finish: finishReason(reply.stopReason), usage: reply.usage };
      },
      listModels: () => listModels(settings(config.model || anthropic.defaultModel)),
      sandbox: anthropicSandbox(settings(config.model || anthropic.defaultModel), config.sandboxTool.trim() || SANDBOX_TOOLS[0], sandboxStore),
    };
  },
};
