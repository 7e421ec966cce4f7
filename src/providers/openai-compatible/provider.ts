import type { Provider, ProviderKind } from "../../chat/provider";
import { DEFAULT_BASE_URL, listModels, streamCompletion, type ServerSettings } from "./client";
import { PROVIDER_ID, toChatMessages, toChatTool } from "./wire";

/**
 * Servers that speak OpenAI's Chat Completions with tool calls: Ollama, llama.cpp's llama-server,
 * LM Studio, vLLM, hosted compatible endpoints. They keep no code sandbox.
 */
export const openaiCompatible: ProviderKind = {
  id: PROVIDER_ID,
  label: "OpenAI-compatible",
  defaultBaseUrl: DEFAULT_BASE_URL,
  defaultModel: "llama3.2",
  keyHint: "optional for local servers",
  keyOptional: true,
  configured: (config) => Boolean(config.baseUrl.trim() || config.apiKey.trim()),
  create(config): Provider {
    const settings: ServerSettings = { apiKey: config.apiKey, baseUrl: config.baseUrl };
    return {
      id: PROVIDER_ID,
      label: openaiCompatible.label,
      async streamTurn(request) {
        return streamCompletion(settings, {
          model: request.model,
          messages: toChatMessages(request.system, request.messages),
          tools: request.tools.map(toChatTool),
          maxTokens: request.maxTokens,
          signal: request.signal,
          onEvent: request.onEvent,
        });
      },
      listModels: (signal) => listModels(settings, signal),
    };
  },
};
