import { openAppDb } from "./db";

import { PYODIDE_VERSION } from "../versions";
import { migrateSettings } from "./migrate";

export { PYODIDE_VERSION, PYTHON_VERSION } from "../versions";

/** What a person sets for one model provider. */
export interface ProviderConfig {
  /** The provider's API key; never sent to the Python worker. Optional for local servers. */
  apiKey: string;
  /** Keep the key in IndexedDB; false keeps it in this tab's memory only. */
  rememberKey: boolean;
  /** The API's base URL (a proxy, a local server, a test server); empty: the provider's own. */
  baseUrl: string;
  /** The model new conversations use with this provider; empty: the provider's default. */
  model: string;
  /** The version of the provider's code execution tool, where it has one; empty: its default. */
  sandboxTool: string;
}

export const EMPTY_PROVIDER_CONFIG: ProviderConfig = { apiKey: "", rememberKey: true, baseUrl: "", model: "", sandboxTool: "" };

/** The person's own Jupyter server (see docs/jupyter.md). */
export interface JupyterConfig {
  /** The server's base URL (JupyterHub: the user's server, `…/user/<name>/`); empty: none. */
  url: string;
  /** The server's token; kept as API keys are, sent only to `url`, never to the Python worker. */
  token: string;
  /** Keep the token in IndexedDB; false keeps it in this tab's memory only. */
  rememberToken: boolean;
}

export const EMPTY_JUPYTER_CONFIG: JupyterConfig = { url: "", token: "", rememberToken: true };

/** Where code runs: see src/execution/route.ts. */
export type BackendSetting = "auto" | "browser" | "provider" | "jupyter";

/** Everything a person can set. Each field is documented in docs/settings.md. */
export interface Settings {
  /** Each provider's key, Base URL and model, by provider id. */
  providers: Record<string, ProviderConfig>;
  /** The provider new conversations start with; empty: the first one set up. */
  provider: string;
  maxTokens: number;
  /** Where code runs: `auto` (browser, else the Jupyter server, else the provider's sandbox), `browser`, `provider`, `jupyter`. */
  backend: BackendSetting;
  /** The person's Jupyter server. */
  jupyter: JupyterConfig;
  /** Where packages from the lock file are downloaded (default: the official CDN). */
  packageBaseUrl: string;
  /** A lock file to use instead of Pyodide's own (for a self-hosted mirror); empty: built in. */
  lockFileUrl: string;
  /** Per-run deadline in seconds; 0 disables it. */
  runTimeoutSeconds: number;
  /** Output kept per run, in KiB; the rest is dropped with a notice. */
  outputLimitKiB: number;
}

export const DEFAULT_SETTINGS: Settings = {
  providers: {},
  provider: "",
  maxTokens: 8192,
  backend: "auto",
  jupyter: EMPTY_JUPYTER_CONFIG,
  packageBaseUrl: `https://cdn.jsdelivr.net/pyodide/v${PYODIDE_VERSION}/full/`,
  lockFileUrl: "",
  runTimeoutSeconds: 120,
  outputLimitKiB: 1024,
};

/** One provider's settings (empty fields where nothing is set). */
export function providerConfig(settings: Settings, provider: string): ProviderConfig {
  return settings.providers[provider] ?? EMPTY_PROVIDER_CONFIG;
}

/**
 * `changed`'s changes to `base`, made to `current`: what another tab saved since `base` was read
 * stays, unless the same field was changed here too (then this save wins).
 */
export function mergeChanges(base: Settings, changed: Settings, current: Settings): Settings {
  const changes = <T extends object>(before: T, after: T, now: T): T => {
    const merged = { ...now };
    for (const key of Object.keys(after) as (keyof T)[]) if (after[key] !== before[key]) merged[key] = after[key];
    return merged;
  };
  const providers = { ...current.providers };
  for (const [id, config] of Object.entries(changed.providers)) providers[id] = changes(providerConfig(base, id), config, providerConfig(current, id));
  return { ...changes(base, changed, current), providers, jupyter: changes(base.jupyter, changed.jupyter, current.jupyter) };
}

/** Hosts that may get the key over plain `http:`: local proxies and local servers. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether `raw` is an address on this device (a local model server), which answers without a network. */
export function isLocalUrl(raw: string): boolean {
  try {
    return LOCAL_HOSTS.has(new URL(raw.trim()).hostname);
  } catch {
    return false;
  }
}

/**
 * Whether the key may be sent to `raw` as the Messages API's base URL: an `https:` URL, or `http:` on
 * localhost, 127.0.0.1 or [::1]; never with a user name or password in it. `url` is the parsed URL (no
 * trailing slash), for the API client to use as is. The messages never repeat `raw` (it may be a pasted key).
 */
export function checkApiBaseUrl(raw: string, { field = "Base URL", secret = "API key" } = {}): { ok: true; url: string } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, message: `The ${field} is not a valid URL. Enter a full address, such as https://api.example.com/v1.` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, message: `The ${field} must start with https:// (or http:// for localhost, 127.0.0.1 or [::1]).` };
  }
  if (url.protocol === "http:" && !LOCAL_HOSTS.has(url.hostname)) {
    return {
      ok: false,
      message: `The ${field} must use https://: plain http:// would send your ${secret} unencrypted. It is allowed only for localhost, 127.0.0.1 and [::1].`,
    };
  }
  if (url.username || url.password) {
    return { ok: false, message: `The ${field} must not contain a user name or password (user:password@). Remove them; the ${secret === "API key" ? "key" : secret} goes in the ${secret === "API key" ? "API key" : "Token"} field.` };
  }
  if (url.search || url.hash) {
    return { ok: false, message: `The ${field} must not contain a query (?…) or fragment (#…). Remove them.` };
  }
  return { ok: true, url: `${url.origin}${url.pathname}`.replace(/\/$/, "") };
}

/** Whether the token may go to `raw` as the Jupyter server's URL: as for a Base URL (see {@link checkApiBaseUrl}). */
export const checkJupyterUrl = (raw: string) => checkApiBaseUrl(raw, { field: "Server URL", secret: "token" });

const KEY = "app";

/** Fields of `source` that have the type of the same field in `defaults`. */
function typed<T extends object>(defaults: T, source: unknown): T {
  const result = { ...defaults };
  if (!source || typeof source !== "object") return result;
  for (const key of Object.keys(defaults) as (keyof T)[]) {
    const value = (source as Record<keyof T, unknown>)[key];
    if (typeof value === typeof defaults[key] && !(typeof value === "object")) result[key] = value as T[keyof T];
  }
  return result;
}

/** Stored settings over the defaults; unknown or mistyped fields are ignored, older shapes migrated. */
export function mergeSettings(stored: unknown): Settings {
  if (!stored || typeof stored !== "object") return { ...DEFAULT_SETTINGS };
  const source = migrateSettings(stored as Record<string, unknown>);
  const providers: Record<string, ProviderConfig> = {};
  if (source.providers && typeof source.providers === "object") {
    for (const [id, config] of Object.entries(source.providers)) providers[id] = typed(EMPTY_PROVIDER_CONFIG, config);
  }
  const backends: readonly string[] = ["auto", "browser", "provider", "jupyter"];
  const merged = { ...typed(DEFAULT_SETTINGS, source), providers, jupyter: typed(EMPTY_JUPYTER_CONFIG, source.jupyter) };
  if (!backends.includes(merged.backend)) merged.backend = DEFAULT_SETTINGS.backend;
  return merged;
}

/** Keys the person chose not to remember live here, by provider, for this tab only. */
const keysInMemory = new Map<string, string>();
/** The Jupyter token's place in {@link keysInMemory} (no provider has this id). */
const JUPYTER_KEY = "jupyter server";

export async function loadSettings(): Promise<Settings> {
  const db = await openAppDb();
  const settings = mergeSettings(await db.get("settings", KEY));
  for (const [id, config] of Object.entries(settings.providers)) {
    if (!config.rememberKey) settings.providers[id] = { ...config, apiKey: keysInMemory.get(id) ?? "" };
  }
  if (!settings.jupyter.rememberToken) settings.jupyter = { ...settings.jupyter, token: keysInMemory.get(JUPYTER_KEY) ?? "" };
  return settings;
}

export async function saveSettings(settings: Settings): Promise<void> {
  const db = await openAppDb();
  const { jupyter } = settings;
  const stored: Settings = { ...settings, providers: {}, jupyter: jupyter.rememberToken ? jupyter : { ...jupyter, token: "" } };
  keysInMemory.clear();
  if (!jupyter.rememberToken) keysInMemory.set(JUPYTER_KEY, jupyter.token);
  for (const [id, config] of Object.entries(settings.providers)) {
    if (!config.rememberKey) keysInMemory.set(id, config.apiKey);
    stored.providers[id] = config.rememberKey ? config : { ...config, apiKey: "" };
  }
  await db.put("settings", stored, KEY);
}
