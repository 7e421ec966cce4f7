import type { StoredSandbox } from "../model/sandbox";
import { openAppDb } from "./db";

/** The sandbox record of a scope (`chat:<conversation id>` or `playground`), if any. */
export async function loadSandbox(scope: string): Promise<StoredSandbox | undefined> {
  const db = await openAppDb();
  return db.get("sandboxes", scope);
}

export async function saveSandbox(scope: string, record: StoredSandbox): Promise<void> {
  const db = await openAppDb();
  await db.put("sandboxes", record, scope);
}
