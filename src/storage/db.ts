import { openDB, type DBSchema, type IDBPDatabase } from "idb";
import type { OutputItem } from "../model/output";
import type { ChatMessage, Conversation } from "../model/conversation";
import type { StoredSandbox } from "../model/sandbox";
import type { SessionSnapshot } from "../../workers/python-api";
import type { Notebook, NotebookCell } from "../notebook/model";
import { migrateMessage, migrateSandbox } from "./migrate";
import { ErasedError, storageErased, whenErased } from "./erased";

export const DB_NAME = "kiln";

/** One of the person's files, in a scope (`chat:<id>` or `notebook:<id>`; `playground` before notebooks). */
export interface StoredFile {
  scope: string;
  /** Relative to the working directory, `/`-separated. */
  path: string;
  data: Blob;
  size: number;
  /** When it last changed, ms since the epoch. */
  modifiedAt: number;
}

/**
 * The Playground as stored: its code, and how many parts its output was saved in (under
 * keys of their own); older versions kept `outputs` here. Read only to be moved into a notebook.
 */
export interface StoredPlayground {
  code: string;
  updatedAt: number;
  parts?: number;
  outputs?: OutputItem[];
}

/** A notebook as stored: its cells without their outputs (kept in `cellOutputs`, see storage/notebooks.ts). */
export type StoredNotebook = Omit<Notebook, "cells"> & { cells: Omit<NotebookCell, "outputs" | "fileOutputs">[] };

/**
 * A conversation's interpreter state as stored: each value in a record of its own (see
 * `saveInterpreterState`), named in `valueKeys`; older versions kept them in `values`.
 */
export type StoredSnapshot = SessionSnapshot & { valueKeys?: Record<string, string> };

/** Every store of Kiln's database, its keys and values. */
export interface AppDbSchema extends DBSchema {
  settings: { key: string; value: unknown };
  /**
   * The Playground before it held notebooks: under `current`, the code; under `current/<n>`, the
   * parts of its output. Moved into the first notebook when the notebooks are first listed.
   */
  playground: { key: string; value: StoredPlayground | OutputItem[] };
  notebooks: { key: string; value: StoredNotebook; indexes: { updatedAt: number } };
  /** Each cell's outputs: under `[notebook id, cell id, n]` the parts of its last run's, under `[…, -1]` those its file brought. */
  cellOutputs: { key: [string, string, number]; value: OutputItem[] | unknown[] };
  conversations: { key: string; value: Conversation; indexes: { updatedAt: number } };
  messages: { key: string; value: ChatMessage; indexes: { conversationId: string } };
  /**
   * Each conversation's interpreter state, to bring it back after a reload: under the
   * conversation's id, the snapshot with its values' keys; under those keys, the values.
   */
  interpreterState: { key: string; value: StoredSnapshot | Uint8Array };
  /** Each scope's sandbox on a provider's side: container and uploads. Keyed like sessions (`chat:<id>`, `playground`). */
  sandboxes: { key: string; value: StoredSandbox };
  /** The person's files, put back into the interpreter whenever a worker starts. */
  /** `data` is a Blob, or its bytes where the browser cannot store a Blob (WebKit in some sessions). */
  files: { key: [string, string]; value: Omit<StoredFile, "data"> & { data: Blob | ArrayBuffer }; indexes: { scope: string } };
  /** What the person was typing in each conversation, not sent yet. */
  drafts: { key: string; value: string };
}

export type AppDb = IDBPDatabase<AppDbSchema>;

let opening: Promise<AppDb> | undefined;

/** The schema this version of Kiln writes. */
export const DB_VERSION = 5;

// Everything was deleted: the connection closes (so that the delete goes through), and none opens again.
whenErased(() => {
  void opening?.then((db) => db.close(), () => undefined);
  opening = undefined;
});

/** The one place that opens the database; upgrades climb a ladder of versions. Refused once everything was deleted. */
export function openAppDb(): Promise<AppDb> {
  if (storageErased()) return Promise.reject(new ErasedError());
  opening ??= openDB<AppDbSchema>(DB_NAME, DB_VERSION, {
    async upgrade(db, oldVersion, _newVersion, tx) {
      if (oldVersion < 1) {
        db.createObjectStore("settings");
        db.createObjectStore("playground");
      }
      if (oldVersion < 2) {
        db.createObjectStore("conversations", { keyPath: "id" }).createIndex("updatedAt", "updatedAt");
        db.createObjectStore("messages", { keyPath: "id" }).createIndex("conversationId", "conversationId");
        db.createObjectStore("interpreterState");
      }
      if (oldVersion < 3) {
        db.createObjectStore("sandboxes");
        db.createObjectStore("files", { keyPath: ["scope", "path"] }).createIndex("scope", "scope");
        db.createObjectStore("drafts");
      }
      if (oldVersion >= 2 && oldVersion < 4) {
        // Schema 3 kept messages in Anthropic's wire format and its sandboxes untagged.
        for (let cursor = await tx.objectStore("messages").openCursor(); cursor; cursor = await cursor.continue()) {
          await cursor.update(migrateMessage(cursor.value));
        }
      }
      if (oldVersion === 3) {
        for (let cursor = await tx.objectStore("sandboxes").openCursor(); cursor; cursor = await cursor.continue()) {
          await cursor.update(migrateSandbox(cursor.value));
        }
      }
      if (oldVersion < 5) {
        db.createObjectStore("notebooks", { keyPath: "id" }).createIndex("updatedAt", "updatedAt");
        db.createObjectStore("cellOutputs");
        // The Playground's code becomes the first notebook when the notebooks are first listed, off the page's thread (migrate-playground.ts).
      }
    },
    // A newer Kiln in another tab wants to upgrade: let it, and open again on the next use.
    blocking() {
      void opening?.then((db) => db.close());
      opening = undefined;
    },
  });
  return opening;
}

/** Why a write to storage failed, for the person ("QuotaExceededError: …" when the disk is full). */
export function storageFailure(error: unknown): string {
  const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  // It is quoted inside a sentence, which has its own full stop.
  return why.trim().replace(/[.。]+$/u, "");
}
