import type { Provider, ProviderKind } from "../../chat/provider";
import { DEFAULT_BASE_URL, listModels, streamResponse } from "./client";
import { openaiSandbox, SANDBOX_LABEL } from "./sandbox-backend";
import { PROVIDER_ID } from "./wire";

/** GPT models through OpenAI's Responses API; code the browser cannot run goes to its code interpreter. */
export const openai: ProviderKind = {
  id: PROVIDER_ID,
  label: "OpenAI",
  defaultBaseUrl: DEFAULT_BASE_URL,
  defaultModel: "gpt-5",
  keyHint: "sk-…",
  keyOptional: false,
  sandbox: { label: SANDBOX_LABEL, tools: [] },
  configured: (config) => Boolean(config.apiKey.trim()),
  create(config, sandboxStore): Provider {
    const settings = { apiKey: config.apiKey, baseUrl: config.baseUrl };
    return {
      id: PROVIDER_ID,
      label: openai.label,
      streamTurn: (request) => streamResponse(settings, request),
      listModels: (signal) => listModels(settings, signal),
      sandbox: openaiSandbox(settings, config.model || openai.defaultModel, sandboxStore),
    };
  },
};
