import type { MimeBundle, PostedEvent, SentCuts, StreamName, WorkerEvent } from "../../workers/python-api";
import { RUN_DISPLAY_CHARS, RUN_FILE_CHARS, entryChars } from "../../workers/output-limits";

/**
 * What a run may send before its worker is replaced: twice what the limits keep (the worker
 * keeps to them; only Python that took the worker over sends more), in characters of text, and
 * in bytes of files sent as bytes.
 */
const receivedCharsLimit = (outputLimitBytes: number) => 2 * (outputLimitBytes + RUN_DISPLAY_CHARS) + (1 << 20);
const RECEIVED_BYTES_LIMIT = 2 * RUN_FILE_CHARS;

/**
 * One run's events on their way from its worker to the page, which does not trust the worker
 * to keep to the output limits: its stdout and stderr are cut to the run's limit here too, and
 * a run that sends far more than any worker keeping to the limits would is flooding.
 */
export class RunIntake {
  /** Characters of output and displays received. */
  private receivedChars = 0;
  /** Bytes of files received as bytes. */
  private receivedBytes = 0;
  /** Pieces of stream text received (each of a `streams` event's runs), and lines of progress and clears. */
  private receivedPieces = 0;
  /** Characters of stdout and stderr passed on. */
  private streamChars = 0;
  /** Whether the run was told its text output was cut. */
  private truncated = false;

  constructor(
    private readonly outputLimitBytes: number,
    private readonly onEvent: ((event: WorkerEvent) => void) | undefined,
  ) {}

  /**
   * Passes `event` on (streams within the run's limit). False, and nothing passed, once the run
   * has sent more than its worker could have while keeping to the limits: the worker is to be
   * replaced. Each piece of stream text (and each line of progress, each clear) counts as well
   * as its characters, since a flood of tiny pieces costs too; an update of a display costs
   * what a display does.
   */
  take(event: Exclude<PostedEvent, { type: "fatal" | "done" }>): boolean {
    if (event.type === "truncated") {
      this.cutStreams();
      return true;
    }
    if (event.type !== "input-request") {
      if (event.type === "streams") {
        this.receivedPieces += Math.max(event.runs.length, 1);
        for (const [, text] of event.runs) this.receivedChars += text.length;
      } else if (event.type === "progress") {
        this.receivedPieces++;
        this.receivedChars += event.message.length;
      } else if (event.type === "clear-output") {
        this.receivedPieces++;
      } else {
        this.receivedChars += bundleChars(event.data);
        this.receivedBytes += sentBytes(event.cut);
      }
      const limit = receivedCharsLimit(this.outputLimitBytes);
      if (this.receivedChars > limit || this.receivedPieces > limit || this.receivedBytes > RECEIVED_BYTES_LIMIT) return false;
    }
    if (event.type === "streams") for (const [name, text] of event.runs) this.passStream(name, text);
    else this.onEvent?.(event);
    return true;
  }

  private passStream(name: StreamName, sent: string): void {
    const room = this.outputLimitBytes - this.streamChars;
    const text = sent.slice(0, Math.max(room, 0));
    this.streamChars += text.length;
    if (text) this.onEvent?.({ type: "stream", name, text });
    if (text.length < sent.length) this.cutStreams();
  }

  /** Tells the run, once, that its text output was cut. */
  private cutStreams(): void {
    if (this.truncated) return;
    this.truncated = true;
    this.onEvent?.({ type: "truncated", limitBytes: this.outputLimitBytes });
  }
}

/** The characters of a bundle: its keys and text, and each entry's overhead. */
function bundleChars(data: MimeBundle): number {
  let chars = 0;
  for (const [key, text] of Object.entries(data)) chars += entryChars(key, text);
  return chars;
}

/** The bytes of files sent as bytes (Blobs arrive by reference and cost the page nothing). */
function sentBytes(cut: SentCuts | undefined): number {
  let bytes = 0;
  for (const { file } of Object.values(cut ?? {})) if (file instanceof Uint8Array) bytes += file.byteLength;
  return bytes;
}
