import type { Provider, ProviderKind } from "../../chat/provider";
import { DEFAULT_BASE_URL, listModels, streamTurn } from "./client";
import { geminiSandbox, SANDBOX_LABEL } from "./sandbox-backend";
import { PROVIDER_ID } from "./wire";

/** Gemini through Google's Gemini API (the official SDK); code the browser cannot run goes to its code execution. */
export const gemini: ProviderKind = {
  id: PROVIDER_ID,
  label: "Gemini",
  defaultBaseUrl: DEFAULT_BASE_URL,
  defaultModel: "gemini-3-flash",
  keyHint: "AIza…",
  keyOptional: false,
  sandbox: { label: SANDBOX_LABEL, tools: [] },
  configured: (config) => Boolean(config.apiKey.trim()),
  create(config): Provider {
    const settings = { apiKey: config.apiKey, baseUrl: config.baseUrl };
    return {
      id: PROVIDER_ID,
      label: gemini.label,
      streamTurn: (request) => streamTurn(settings, request),
      listModels: (signal) => listModels(settings, signal),
      sandbox: geminiSandbox(settings, config.model || gemini.defaultModel),
    };
  },
};
