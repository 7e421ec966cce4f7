import { openDB, type DBSchema, type IDBPDatabase } from "idb";
import type { OutputItem } from "../runtime/output-model";

export const DB_NAME = "kiln";

export interface PlaygroundRecord {
  code: string;
  outputs: OutputItem[];
  updatedAt: number;
}

/** Every store of Kiln's database, its keys and values. */
export interface AppDbSchema extends DBSchema {
  settings: { key: string; value: unknown };
  playground: { key: string; value: PlaygroundRecord };
}

export type AppDb = IDBPDatabase<AppDbSchema>;

let opening: Promise<AppDb> | undefined;

/** The one place that opens the database; upgrades climb a ladder of versions. */
export function openAppDb(): Promise<AppDb> {
  opening ??= openDB<AppDbSchema>(DB_NAME, 1, {
    upgrade(db, oldVersion) {
      if (oldVersion < 1) {
        db.createObjectStore("settings");
        db.createObjectStore("playground");
      }
    },
  });
  return opening;
}
