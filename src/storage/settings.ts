import type { ProviderSettings } from "../providers/anthropic/client";
import { openAppDb } from "./db";

import { PYODIDE_VERSION } from "../versions";

export { PYODIDE_VERSION, PYTHON_VERSION } from "../versions";

/** Everything a person can set. Each field is documented in the README. */
export interface Settings {
  /** Anthropic API key; never sent to the Python worker. */
  apiKey: string;
  /** Keep the key in IndexedDB; false keeps it in this tab's memory only. */
  rememberKey: boolean;
  model: string;
  /** The Messages API's base URL (a proxy, or a test server). */
  baseUrl: string;
  maxTokens: number;
  /** Where code runs: `auto` (browser, else Anthropic's sandbox), `browser`, `provider`. */
  backend: "auto" | "browser" | "provider";
  /** The code execution tool version used on Anthropic's sandbox. */
  sandboxTool: string;
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
  apiKey: "",
  rememberKey: true,
  model: "claude-sonnet-5-5",
  baseUrl: "https://api.anthropic.com",
  maxTokens: 8192,
  backend: "auto",
  sandboxTool: "code_execution_20260521",
  packageBaseUrl: `https://cdn.jsdelivr.net/pyodide/v${PYODIDE_VERSION}/full/`,
  lockFileUrl: "",
  runTimeoutSeconds: 120,
  outputLimitKiB: 1024,
};

/** What the API client needs from the settings. */
export function providerSettings(settings: Settings): ProviderSettings {
  return { apiKey: settings.apiKey, baseUrl: settings.baseUrl, model: settings.model, maxTokens: settings.maxTokens };
}

/** Hosts that may get the key over plain `http:`: local proxies and local servers. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Whether the key may be sent to `raw` as the Messages API's base URL: an `https:` URL, or `http:` on
 * localhost, 127.0.0.1 or [::1]; never with a user name or password in it. `url` is the parsed URL (no
 * trailing slash), for the API client to use as is. The messages never repeat `raw` (it may be a pasted key).
 */
export function checkApiBaseUrl(raw: string): { ok: true; url: string } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, message: "The Base URL is not a valid URL. Enter a full address, such as https://api.anthropic.com." };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, message: "The Base URL must start with https:// (or http:// for localhost, 127.0.0.1 or [::1])." };
  }
  if (url.protocol === "http:" && !LOCAL_HOSTS.has(url.hostname)) {
    return {
      ok: false,
      message: "The Base URL must use https://: plain http:// would send your API key unencrypted. It is allowed only for localhost, 127.0.0.1 and [::1].",
    };
  }
  if (url.username || url.password) {
    return { ok: false, message: "The Base URL must not contain a user name or password (user:password@). Remove them; the key goes in the API key field." };
  }
  if (url.search || url.hash) {
    return { ok: false, message: "The Base URL must not contain a query (?…) or fragment (#…). Remove them." };
  }
  return { ok: true, url: `${url.origin}${url.pathname}`.replace(/\/$/, "") };
}

const KEY = "app";

/** Stored settings over the defaults; unknown or mistyped fields are ignored. */
export function mergeSettings(stored: unknown): Settings {
  const result: Settings = { ...DEFAULT_SETTINGS };
  if (!stored || typeof stored !== "object") return result;
  const source = stored as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof Settings)[]) {
    const value = source[key];
    if (typeof value === typeof DEFAULT_SETTINGS[key]) (result as unknown as Record<string, unknown>)[key] = value;
  }
  return result;
}

/** A key the person chose not to remember lives here, for this tab only. */
let keyInMemory = "";

export async function loadSettings(): Promise<Settings> {
  const db = await openAppDb();
  const settings = mergeSettings(await db.get("settings", KEY));
  return settings.rememberKey ? settings : { ...settings, apiKey: keyInMemory };
}

export async function saveSettings(settings: Settings): Promise<void> {
  const db = await openAppDb();
  keyInMemory = settings.rememberKey ? "" : settings.apiKey;
  await db.put("settings", settings.rememberKey ? settings : { ...settings, apiKey: "" }, KEY);
}
