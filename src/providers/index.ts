import type { ModelRef } from "../model/conversation";
import type { Provider, ProviderKind } from "../chat/provider";
import type { SandboxChoice } from "../execution/run-code";
import { loadSandbox, saveSandbox } from "../storage/sandboxes";
import { isLocalUrl, providerConfig, type ProviderConfig, type Settings } from "../storage/settings";
import { anthropic } from "./anthropic/provider";
import { gemini } from "./gemini/provider";
import { openai } from "./openai/provider";
import { openaiCompatible } from "./openai-compatible/provider";

/** Every provider Kiln can talk to, in the order Settings shows them. */
export const PROVIDERS: readonly ProviderKind[] = [anthropic, openai, gemini, openaiCompatible];

export const providerKind = (id: string): ProviderKind | undefined => PROVIDERS.find((kind) => kind.id === id);

/** A provider's settings with its defaults where nothing is set. */
export function effectiveConfig(settings: Settings, kind: ProviderKind): ProviderConfig {
  const config = providerConfig(settings, kind.id);
  return { ...config, baseUrl: config.baseUrl.trim() || kind.defaultBaseUrl, model: config.model.trim() || kind.defaultModel };
}

/**
 * Whether `ref` is a model served on this device (a local server, such as Ollama, on a local
 * Base URL), which answers without a network. A cloud provider's API through a local proxy
 * still needs the network.
 */
export function servedLocally(settings: Settings, ref: ModelRef | undefined): boolean {
  const kind = ref && providerKind(ref.provider);
  return Boolean(kind?.keyOptional && isLocalUrl(effectiveConfig(settings, kind).baseUrl));
}

/** Providers set up enough to use. */
export const configuredProviders = (settings: Settings): ProviderKind[] =>
  PROVIDERS.filter((kind) => kind.configured(providerConfig(settings, kind.id)));

/** "<provider> · <model>", as the model picker and each answer show it. */
export const modelLabel = (ref: ModelRef): string => `${providerKind(ref.provider)?.label ?? ref.provider} · ${ref.model}`;

/** The model an answer comes from: the conversation's choice while its provider is set up, else the default. */
export function chosenModel(settings: Settings, choice?: ModelRef): ModelRef | undefined {
  const configured = configuredProviders(settings);
  if (choice && configured.some((kind) => kind.id === choice.provider)) return choice;
  const kind = configured.find((k) => k.id === settings.provider) ?? configured[0];
  return kind && { provider: kind.id, model: effectiveConfig(settings, kind).model };
}

/**
 * The settings with `ref` as the model new conversations start with: its provider becomes the default
 * one, and its model that provider's (left as it is when it already names that model).
 */
export function withModelChosen(settings: Settings, ref: ModelRef): Settings {
  const kind = providerKind(ref.provider);
  if (!kind) return settings;
  const config = providerConfig(settings, kind.id);
  const model = effectiveConfig(settings, kind).model === ref.model ? config.model : ref.model;
  return { ...settings, provider: kind.id, providers: { ...settings.providers, [kind.id]: { ...config, model } } };
}

/**
 * The provider a save in Settings makes the default: the first whose Model was changed there and that was
 * already set up before (a change of the model in use); else the default stays as it was.
 */
export function providerSavedLast(before: Settings, after: Settings): string {
  const changed = configuredProviders(before).find(
    (kind) => effectiveConfig(before, kind).model !== effectiveConfig(after, kind).model && kind.configured(providerConfig(after, kind.id)),
  );
  return changed?.id ?? after.provider;
}

/** A provider set up with the person's settings, keeping its sandbox's record under `scope`. */
export function createProvider(settings: Settings, id: string, scope: string): Provider | undefined {
  const kind = providerKind(id);
  if (!kind) return undefined;
  return kind.create(effectiveConfig(settings, kind), {
    load: () => loadSandbox(scope),
    save: (record) => saveSandbox(scope, { ...record, provider: String(record.provider ?? id) }),
  });
}

/** The sandbox runs may go to with this provider, if it has one. */
export function sandboxChoice(provider: Provider | undefined): SandboxChoice | undefined {
  return provider?.sandbox && { backend: provider.sandbox, provider: provider.label };
}

/** Without a sandbox: what would give one. */
export function noSandboxReason(current?: Provider): string {
  const withSandbox = PROVIDERS.filter((kind) => kind.sandbox);
  const article = (label: string) => (/^[AEIOU]/.test(label) ? "an" : "a");
  const [first, ...rest] = withSandbox;
  const more = rest.map((kind) => `${article(kind.label)} ${kind.label} key for ${kind.sandbox!.label}`).join(", or ");
  const add = `Add ${article(first.label)} ${first.label} API key in Settings to run such code on ${first.sandbox!.label}${more ? ` (or ${more})` : ""}.`;
  if (!current) return add;
  const others = withSandbox.map((kind) => kind.label).join(" or ");
  return `${current.label} servers have no code sandbox: choose a model from ${others} to run such code on its sandbox.`;
}

/** The provider whose sandbox the Playground offers: the default one if it has a sandbox, else any set up that has. */
export function sandboxProvider(settings: Settings, scope: string): Provider | undefined {
  const withSandbox = configuredProviders(settings).filter((kind) => kind.sandbox);
  const kind = withSandbox.find((k) => k.id === settings.provider) ?? withSandbox[0];
  return kind && createProvider(settings, kind.id, scope);
}
