/**
 * The widget's protocol (version 1, see docs/embedding.md, "A widget written by hand"): the URL parameters
 * of `embed.html`, the messages a host page sends, and the ones the widget sends back.
 * Pure functions, no DOM: the page wiring is in host-link.ts.
 */
import type { MimeBundle, PythonError, RestoreReport, RunStatus, StreamName } from "../../workers/python-api";
import { LONGEST_DEADLINE_MS } from "../runtime/session-config";

export const PROTOCOL_VERSION = 1;

/** A host's name for a run, echoed in every message about it. */
export type RunId = string | number;

/** Parent → widget. */
export type HostMessage =
  | { kiln: 1; type: "run"; id: RunId; code: string; timeoutMs?: number }
  | { kiln: 1; type: "interrupt" }
  | { kiln: 1; type: "restart" }
  | { kiln: 1; type: "writeFile"; path: string; data: string | ArrayBuffer };

/** Widget → parent. */
export type WidgetMessage =
  | { kiln: 1; type: "ready"; pyodide: string; python: string }
  | { kiln: 1; type: "stream"; id: RunId; name: StreamName; text: string }
  | { kiln: 1; type: "display"; id: RunId; data: MimeBundle }
  | {
      kiln: 1;
      type: "result";
      id: RunId;
      status: RunStatus;
      value?: MimeBundle;
      error?: PythonError;
      durationMs: number;
      restored?: RestoreReport;
    }
  | { kiln: 1; type: "resize"; height: number }
  /** A cell's check ran (cells made by `embed.js`): `cell` is the `<pre>`'s id, else its number. */
  | { kiln: 1; type: "check"; id?: RunId; cell: string | number; passed: boolean; message: string };

/** Limits past which a message is treated as malformed and ignored. */
export const MAX_CODE_CHARS = 1_000_000;
export const MAX_ID_CHARS = 256;
export const MAX_PATH_CHARS = 4096;
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function isRunId(value: unknown): value is RunId {
  return (typeof value === "string" && value.length <= MAX_ID_CHARS) || (typeof value === "number" && Number.isFinite(value));
}

/** The message if it is a well-formed version 1 host message, else undefined (ignored). */
export function parseHostMessage(data: unknown): HostMessage | undefined {
  if (!isRecord(data) || data.kiln !== PROTOCOL_VERSION) return undefined;
  switch (data.type) {
    case "run": {
      const { id, code, timeoutMs } = data;
      if (!isRunId(id) || typeof code !== "string" || code.length > MAX_CODE_CHARS) return undefined;
      if (timeoutMs === undefined) return { kiln: 1, type: "run", id, code };
      if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 0) return undefined;
      return { kiln: 1, type: "run", id, code, timeoutMs: Math.min(timeoutMs, LONGEST_DEADLINE_MS) };
    }
    case "interrupt":
    case "restart":
      return { kiln: 1, type: data.type };
    case "writeFile": {
      const { path, data: content } = data;
      if (typeof path !== "string" || !path || path.length > MAX_PATH_CHARS || path.includes("\0") || path.endsWith("/")) {
        return undefined;
      }
      if (typeof content === "string") {
        return content.length <= MAX_FILE_BYTES ? { kiln: 1, type: "writeFile", path, data: content } : undefined;
      }
      if (content instanceof ArrayBuffer && content.byteLength <= MAX_FILE_BYTES) {
        return { kiln: 1, type: "writeFile", path, data: content };
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Which parent origins may drive the widget: any, or a list (possibly empty: none). */
export type OriginPolicy = { any: true } | { any: false; origins: string[] };

/** `origins=https://a.example,https://b.example`; absent or `*`: any origin. */
export function parseOrigins(param: string | null): OriginPolicy {
  if (param === null || param.trim() === "" || param.trim() === "*") return { any: true };
  const origins = new Set<string>();
  for (const part of param.split(",")) {
    try {
      const origin = new URL(part.trim()).origin;
      // Only tuple origins: "null" (file:, data:, sandboxed pages) cannot be told apart.
      if (origin !== "null") origins.add(origin);
    } catch {
      // Not a URL: it allows nothing (a typo must not open the widget to everyone).
    }
  }
  return { any: false, origins: [...origins] };
}

export function originAllowed(policy: OriginPolicy, origin: string): boolean {
  return policy.any || policy.origins.includes(origin);
}

/**
 * Where a message to the parent may go: the origin the parent last wrote from when known,
 * else every allowed origin (the browser delivers only to the one the parent has), else
 * any when every origin is allowed. Never an origin the policy does not allow.
 */
export function targetOrigins(policy: OriginPolicy, parentOrigin: string | undefined): string[] {
  if (parentOrigin !== undefined && parentOrigin !== "null" && originAllowed(policy, parentOrigin)) return [parentOrigin];
  return policy.any ? ["*"] : policy.origins;
}

export interface EmbedOptions {
  code: string;
  autorun: boolean;
  readonly: boolean;
  origins: OriginPolicy;
}

const isOn = (value: string | null) => value !== null && ["1", "true", "yes", ""].includes(value.toLowerCase());

/** `?code=…&autorun=1&readonly=1&origins=…` */
export function parseEmbedParams(search: string): EmbedOptions {
  const params = new URLSearchParams(search);
  return {
    code: params.get("code") ?? "",
    autorun: isOn(params.get("autorun")),
    readonly: isOn(params.get("readonly")),
    origins: parseOrigins(params.get("origins")),
  };
}
