import { openAppDb, type PlaygroundRecord } from "./db";

const KEY = "current";

export async function loadPlayground(): Promise<PlaygroundRecord | undefined> {
  const db = await openAppDb();
  return db.get("playground", KEY);
}

export async function savePlayground(record: PlaygroundRecord): Promise<void> {
  const db = await openAppDb();
  await db.put("playground", record, KEY);
}
