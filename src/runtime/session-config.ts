import type { Settings } from "../storage/settings";
import type { WorkerConfig } from "./python-worker";

/** What a Python session is started with: its worker's configuration, and the rules of its runs. */
export interface SessionConfig extends WorkerConfig {
  /** Per-run output cap in bytes. */
  outputLimitBytes: number;
  /** Per-run deadline in milliseconds; 0 disables it. */
  timeoutMs: number;
  /** Whether `input()` may ask the person. */
  allowInput: boolean;
  /**
   * When to load the warm spare: as soon as Python is ready (default), or only once the
   * session's first run has ended (pages with several sessions that may never run).
   */
  spare?: "eager" | "on-first-run";
}

/** The longest delay a browser timer keeps: a longer one fires at once. Deadlines longer than this (24.8 days) are cut to it. */
export const LONGEST_DEADLINE_MS = 2 ** 31 - 1;

/** The session configuration that follows from the person's settings. */
export function sessionConfig(
  settings: Settings,
  { allowInput, network }: { allowInput: boolean; network: boolean },
): SessionConfig {
  return {
    network,
    lockFileUrl: settings.lockFileUrl.trim(),
    packageBaseUrl: settings.packageBaseUrl.trim(),
    outputLimitBytes: settings.outputLimitKiB * 1024,
    timeoutMs: Math.min(settings.runTimeoutSeconds * 1000, LONGEST_DEADLINE_MS),
    allowInput,
  };
}
