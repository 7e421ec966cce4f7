import type { Settings } from "../storage/settings";
import type { SessionConfig } from "./python-session";

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
    timeoutMs: settings.runTimeoutSeconds * 1000,
    allowInput,
  };
}
