/**
 * Records written by earlier versions of Kiln, brought to the current shapes. Pure functions:
 * the database upgrade (db.ts) and the settings loader use them.
 */
import type { CellRecord, ChatMessage, ContentBlock, ImageBlock, TextBlock } from "../model/conversation";
import type { StoredSandbox } from "../model/sandbox";

type Old = Record<string, unknown>;
const isObject = (value: unknown): value is Old => typeof value === "object" && value !== null;

/** The one provider that schema 3 knew: its messages are in its wire format. */
const SCHEMA_3_PROVIDER = "anthropic";
const SCHEMA_3_SANDBOX_LABEL = "Anthropic's sandbox";

function textOrImage(block: unknown): TextBlock | ImageBlock {
  if (isObject(block) && block.type === "image" && isObject(block.source)) {
    return { type: "image", mediaType: String(block.source.media_type), data: String(block.source.data) };
  }
  return { type: "text", text: isObject(block) && typeof block.text === "string" ? block.text : "" };
}

/** A content block of schema 3 (the Messages API's shape) in the neutral model. */
function block(old: unknown): ContentBlock {
  if (!isObject(old)) return { type: "text", text: String(old) };
  switch (old.type) {
    case "text":
      return { type: "text", text: String(old.text ?? "") };
    case "image":
      return textOrImage(old);
    case "tool_use":
      return { type: "tool_call", id: String(old.id), name: String(old.name), input: old.input ?? {} };
    case "tool_result":
      return {
        type: "tool_result",
        callId: String(old.tool_use_id),
        content: Array.isArray(old.content) ? old.content.map(textOrImage) : [{ type: "text", text: String(old.content ?? "") }],
        ...(old.is_error ? { isError: true } : {}),
      };
    default:
      return { type: "provider", provider: SCHEMA_3_PROVIDER, data: old, text: "" };
  }
}

/** A message of schema 3 in the current shape (a current message is returned as it is). */
export function migrateMessage(old: ChatMessage): ChatMessage {
  const content = old.content.map((b) => (isCurrent(b) ? b : block(b)));
  const cells = old.cells?.map((cell): CellRecord => {
    const { sandbox, ...rest } = cell as CellRecord & { sandbox?: { reason: string; notes: string[] } };
    return sandbox ? { ...rest, ranOn: { label: SCHEMA_3_SANDBOX_LABEL, reason: sandbox.reason, notes: sandbox.notes } } : rest;
  });
  return {
    ...old,
    content,
    ...(cells ? { cells } : {}),
    ...(old.role === "assistant" && !old.author ? { author: { provider: SCHEMA_3_PROVIDER, model: "" } } : {}),
  };
}

function isCurrent(b: unknown): boolean {
  return isObject(b) && (b.type === "tool_call" || b.type === "provider" || (b.type === "tool_result" && "callId" in b) || (b.type === "image" && "mediaType" in b));
}

/** A sandbox record of schema 3 (Anthropic's, untagged) tagged with its provider. */
export function migrateSandbox(old: Old): StoredSandbox {
  return typeof old.provider === "string" ? (old as StoredSandbox) : { ...old, provider: SCHEMA_3_PROVIDER };
}

/**
 * Settings saved before keys were kept per provider had one key, model and Base URL at the top
 * level: they become the Anthropic provider's.
 */
export function migrateSettings(stored: Old): Old {
  if (isObject(stored.providers) || !("apiKey" in stored || "model" in stored || "baseUrl" in stored)) return stored;
  const { apiKey, model, baseUrl, rememberKey, ...rest } = stored;
  const config: Old = {};
  if (typeof apiKey === "string") config.apiKey = apiKey;
  if (typeof model === "string") config.model = model;
  if (typeof baseUrl === "string") config.baseUrl = baseUrl;
  if (typeof rememberKey === "boolean") config.rememberKey = rememberKey;
  return { ...rest, provider: SCHEMA_3_PROVIDER, providers: { [SCHEMA_3_PROVIDER]: config } };
}
