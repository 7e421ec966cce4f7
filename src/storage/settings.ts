import { openAppDb } from "./db";

export const PYODIDE_VERSION = "314.0.7";

/** Everything a person can set. Each field is documented in the README. */
export interface Settings {
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
  packageBaseUrl: `https://cdn.jsdelivr.net/pyodide/v${PYODIDE_VERSION}/full/`,
  lockFileUrl: "",
  runTimeoutSeconds: 120,
  outputLimitKiB: 1024,
};

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

export async function loadSettings(): Promise<Settings> {
  const db = await openAppDb();
  return mergeSettings(await db.get("settings", KEY));
}

export async function saveSettings(settings: Settings): Promise<void> {
  const db = await openAppDb();
  await db.put("settings", settings, KEY);
}
