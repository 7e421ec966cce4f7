import type { StreamName } from "../../workers/python-api";
import type { OutputItem } from "./output";

/**
 * Stream text is kept in pieces of about this size, each ending at a line break, so the
 * page can show each piece as its own block: appending then lays out only the last one.
 */
export const STREAM_PIECE_CHARS = 8 * 1024;

/**
 * Stream blocks one run keeps apart at most: text that switches between stdout and stderr more
 * often than this goes on, in order, in the last block whatever its stream, after a notice.
 * Each block is an element of the page, so a loop printing to both in turn would otherwise
 * make the output ever slower to show and to save.
 */
export const MAX_STREAM_ITEMS = 2000;

/** The notice shown, once, where a run's stdout and stderr stop being kept apart. */
export const STREAMS_JOINED_NOTICE =
  `Output switched between stdout and stderr more than ${MAX_STREAM_ITEMS} times; ` +
  "from here on both are shown together, in the order they were written.";

/**
 * Appends to `next` (a run's output so far, changed in place): stream text joins the open
 * block of its stream, in pieces, within {@link MAX_STREAM_ITEMS}; any other item closes it.
 * `finish` closes the last block.
 */
export function streamBlocks(next: OutputItem[]) {
  let streamItems = 0;
  let joined = false;
  for (const item of next) {
    if (item.kind === "stream") streamItems++;
    else if (item.kind === "notice" && item.text === STREAMS_JOINED_NOTICE) joined = true;
  }
  // The text of the last block, gathered before it is cut into pieces (once, not per event).
  let open: { name: StreamName; text: string } | undefined;
  const last = next[next.length - 1];
  if (last?.kind === "stream") {
    next.pop();
    streamItems--;
    open = { name: last.name, text: last.text };
  }
  const close = () => {
    if (!open) return;
    const { name } = open;
    const pieces = streamPieces(open.text);
    for (const text of pieces) next.push({ kind: "stream", name, text });
    streamItems += pieces.length;
    open = undefined;
  };
  return {
    stream(name: StreamName, text: string): void {
      if (open && (open.name === name || joined)) {
        open.text += text;
        return;
      }
      close();
      if (!joined && streamItems >= MAX_STREAM_ITEMS) {
        joined = true;
        next.push({ kind: "notice", tone: "warning", text: STREAMS_JOINED_NOTICE });
      }
      open = { name, text };
    },
    item(item: OutputItem): void {
      close();
      if (item.kind === "notice" && item.text === STREAMS_JOINED_NOTICE) joined = true;
      next.push(item);
    },
    finish: close,
  };
}

/**
 * `text` in pieces of at most {@link STREAM_PIECE_CHARS}, each cut after a line break (a line
 * longer than that is a piece of its own); the last piece holds the rest. A flood's batch of
 * output can be hundreds of kilobytes: shown as one block, laying it out held the page up.
 */
function streamPieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > STREAM_PIECE_CHARS) {
    const before = text.lastIndexOf("\n", start + STREAM_PIECE_CHARS - 1);
    const cut = before >= start ? before + 1 : text.indexOf("\n", start + STREAM_PIECE_CHARS) + 1;
    if (cut <= 0 || cut === text.length) break;
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}
