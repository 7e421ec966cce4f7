import type { SandboxAccess, SandboxState } from "../runtime/run-code";
import { openAppDb } from "./db";
import { DEFAULT_SETTINGS, providerSettings, type Settings } from "./settings";

/** The sandbox of a scope (`chat:<conversation id>` or `playground`), or a fresh one. */
export async function loadSandbox(scope: string): Promise<SandboxState> {
  const db = await openAppDb();
  return (await db.get("sandboxes", scope)) ?? { uploads: {}, attached: [], cells: 0 };
}

export async function saveSandbox(scope: string, state: SandboxState): Promise<void> {
  const db = await openAppDb();
  await db.put("sandboxes", state, scope);
}

/** How a scope reaches Anthropic's sandbox with these settings; undefined without an API key. */
export function sandboxAccess(settings: Settings, scope: string): SandboxAccess | undefined {
  if (!settings.apiKey) return undefined;
  return {
    settings: providerSettings(settings),
    toolType: settings.sandboxTool.trim() || DEFAULT_SETTINGS.sandboxTool,
    load: () => loadSandbox(scope),
    save: (state) => saveSandbox(scope, state),
  };
}
