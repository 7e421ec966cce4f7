import { groupDigits } from "../../workers/output-limits";
import { isRecord, NotebookFileError } from "./cells";
import { newNotebook } from "./model";
import { MAX_CELLS } from "./ipynb";
import { newCell, type CellKind, type Notebook } from "./model";

/*
 * A notebook in a link: its title and cells (kind and source; no outputs, ids or metadata) as
 * JSON, compressed (deflate-raw) and written in base64url. It goes in the URL's fragment, which
 * the browser never sends to any server. See docs/notebooks.md, "Files and links".
 */

/**
 * The longest encoded notebook a link carries: browsers take URLs of megabytes, but chat apps,
 * mail clients and link shorteners cut or refuse links past a few tens of thousands of characters.
 */
export const MAX_SHARE_CHARS = 32_000;
/** The most a link's notebook may unpack to: far more than {@link MAX_SHARE_CHARS} of real code compresses from; more is a bomb. */
export const MAX_SHARE_UNPACKED_BYTES = 5 * 1024 * 1024;
/** The format of the payload; a link of a later one says so. */
export const SHARE_VERSION = 1;

const FORMAT = "deflate-raw";
const KINDS: readonly CellKind[] = ["code", "markdown", "raw"];

/**
 * A notebook too large for a link: `chars` is its encoded length, past {@link MAX_SHARE_CHARS}
 * (or, with `unpacked`, its length before compression, past {@link MAX_SHARE_UNPACKED_BYTES}).
 */
export class TooBigToShare extends Error {
  override name = "TooBigToShare";
  constructor(
    readonly chars: number,
    readonly unpacked = false,
  ) {
    const limit = unpacked ? `${groupDigits(MAX_SHARE_UNPACKED_BYTES)} before it is compressed` : groupDigits(MAX_SHARE_CHARS);
    super(`This notebook is too large for a link: it takes ${groupDigits(chars)} characters, and a link holds at most ${limit}. Download it instead.`);
  }
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** The notebook's title and cells as the text of a link's fragment; throws {@link TooBigToShare} past {@link MAX_SHARE_CHARS}. */
export async function encodeShare(notebook: Notebook): Promise<string> {
  const payload = { v: SHARE_VERSION, title: notebook.title, cells: notebook.cells.map(({ kind, source }) => ({ kind, source })) };
  const json = new TextEncoder().encode(JSON.stringify(payload));
  // A link that opening would refuse as a bomb is not made, however well it compresses.
  if (json.byteLength > MAX_SHARE_UNPACKED_BYTES) throw new TooBigToShare(json.byteLength, true);
  const stream = new Blob([json]).stream().pipeThrough(new CompressionStream(FORMAT));
  const encoded = toBase64Url(new Uint8Array(await new Response(stream).arrayBuffer()));
  if (encoded.length > MAX_SHARE_CHARS) throw new TooBigToShare(encoded.length);
  return encoded;
}

const damaged = (why: string) => new NotebookFileError(`This link's notebook cannot be opened: ${why}`);

/** The bytes `compressed` unpacks to, refusing past {@link MAX_SHARE_UNPACKED_BYTES} as soon as it gets there. */
async function unpack(compressed: Uint8Array): Promise<Uint8Array> {
  const reader = new Blob([compressed as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream(FORMAT)).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_SHARE_UNPACKED_BYTES) {
        await reader.cancel();
        throw damaged(`it unpacks to more than ${groupDigits(MAX_SHARE_UNPACKED_BYTES)} bytes, more than any link Kiln makes.`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof NotebookFileError) throw error;
    throw damaged("it is damaged (it does not unpack); the link may have been cut short when it was copied.");
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** The notebook a link's fragment holds (new ids, no outputs); throws a {@link NotebookFileError} saying what is wrong. */
export async function decodeShare(fragment: string): Promise<Notebook> {
  if (fragment.length > MAX_SHARE_CHARS) throw damaged(`it is ${groupDigits(fragment.length)} characters long, longer than any link Kiln makes.`);
  if (!/^[A-Za-z0-9_-]+$/.test(fragment) || fragment.length % 4 === 1) throw damaged("it is not a notebook Kiln wrote (it holds characters a link's notebook never has).");
  const text = await unpack(fromBase64Url(fragment)).then((bytes) => {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw damaged("it is damaged (it is not text).");
    }
  });
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    throw damaged("it is damaged (it is not JSON).");
  }
  if (!isRecord(payload) || typeof payload.v !== "number") throw damaged("it is not a notebook Kiln wrote.");
  if (payload.v > SHARE_VERSION) throw damaged("a newer version of Kiln made it; reload the page to update Kiln, then open the link again.");
  if (payload.v !== SHARE_VERSION || typeof payload.title !== "string" || !Array.isArray(payload.cells)) throw damaged("it is not a notebook Kiln wrote.");
  if (payload.cells.length > MAX_CELLS) throw damaged(`it has ${groupDigits(payload.cells.length)} cells, and a notebook has at most ${groupDigits(MAX_CELLS)}.`);
  const cells = payload.cells.map((cell, index) => {
    if (!isRecord(cell) || !KINDS.includes(cell.kind as CellKind) || typeof cell.source !== "string") {
      throw damaged(`cell ${index + 1} is not a code, Markdown or raw cell with its text.`);
    }
    return newCell(cell.kind as CellKind, cell.source);
  });
  return newNotebook(payload.title, cells);
}
