import { OutputBatcher } from "./output-batcher";
import { BINARY_TYPES, DISPLAY_ID_CHARS, DROPPED_KEY, RunLimits } from "./output-limits";
import type { MimeBundle, PostedEvent, SentCuts, StreamName } from "./python-api";

/**
 * What a run shows, on its way from Python to the page: stdout and stderr in batches within the
 * run's limit (output-batcher.ts), displays within the run's output limits with each value cut
 * from them kept whole as a file (output-limits.ts), and `clear_output`.
 */
export class RunOutput {
  private readonly batcher: OutputBatcher;
  /** The current run's budget for displays and its value. */
  private limits = new RunLimits();
  /** A `clear_output(wait=True)` waits for the run's next output. */
  private clearPending = false;
  /** Whether Blobs reach the page whole (else files go as bytes). */
  sendBlobs = false;

  constructor(private readonly post: (event: PostedEvent, transfer?: Transferable[]) => void) {
    this.batcher = new OutputBatcher((event) => post(event));
  }

  /** A new run, whose stdout and stderr are cut at `limitBytes` (0: none is sent). */
  begin(limitBytes: number): void {
    this.batcher.begin(limitBytes);
    this.limits = new RunLimits();
    this.clearPending = false;
  }

  /** Posts the text written so far. */
  flush(): void {
    this.batcher.flush();
  }

  /** Bytes of stdout and stderr past the run's limit, not sent. */
  get droppedBytes(): number {
    return this.batcher.droppedBytes;
  }

  write(name: StreamName, bytes: Uint8Array): number {
    if (this.clearPending && bytes.length) {
      this.batcher.flush();
      this.clearIfPending();
    }
    this.batcher.write(name, bytes);
    return bytes.length;
  }

  /**
   * From Python, as JSON, posted after the text printed before it: a display bundle
   * (`display`), a display with an id, new or replacing the earlier ones (`display_id`), or a
   * request to clear the output (`clear`), at once or when the next output comes (`wait`).
   */
  emit(kind: string, payload: string): void {
    if (kind !== "display" && kind !== "display_id" && kind !== "clear") return;
    this.batcher.flush();
    if (kind === "clear") {
      const wait = (JSON.parse(payload) as { wait?: unknown }).wait === true;
      this.clearPending = wait;
      if (!wait) this.post({ type: "clear-output" });
      return;
    }
    this.clearIfPending();
    if (kind === "display") {
      const { data, cut } = this.capped(JSON.parse(payload) as MimeBundle);
      this.post({ type: "display", data, ...(cut ? { cut } : {}) }, fileBuffers(cut));
      return;
    }
    const sent = JSON.parse(payload) as { id: string; data: MimeBundle; update: boolean };
    const displayId = String(sent.id).slice(0, DISPLAY_ID_CHARS);
    const { data, cut } = this.capped(sent.data);
    const event = sent.update ? ("update-display" as const) : ("display" as const);
    this.post({ type: event, data, displayId, ...(cut ? { cut } : {}) }, fileBuffers(cut));
  }

  /** A bundle within the run's output limits, with each value cut from it kept whole as a file (see output-limits.ts). */
  capped(bundle: MimeBundle): { data: MimeBundle; cut?: SentCuts } {
    const { data, cut, dropped } = this.limits.cap(bundle);
    const entries = Object.entries(cut);
    if (!entries.length && !dropped) return { data };
    const files: SentCuts = dropped ? { [DROPPED_KEY]: { chars: dropped } } : {};
    for (const [mime, { chars, whole }] of entries) {
      if (whole === undefined) {
        files[mime] = { chars };
        continue;
      }
      const bytes = BINARY_TYPES.has(mime) ? base64Bytes(whole) : new TextEncoder().encode(whole);
      const file = bytes ?? new TextEncoder().encode(whole);
      files[mime] = {
        chars,
        // Never a type the browser renders: opened rather than downloaded, HTML would run as the app.
        file: this.sendBlobs ? new Blob([file as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }) : file,
        ...(bytes ? {} : { base64: true as const }),
      };
    }
    return { data, cut: files };
  }

  /** A `clear_output(wait=True)` takes effect as the next output comes. */
  private clearIfPending(): void {
    if (!this.clearPending) return;
    this.clearPending = false;
    this.post({ type: "clear-output" });
  }
}

/** The buffers of files sent as bytes, to transfer rather than copy. */
export function fileBuffers(cut: SentCuts | undefined): ArrayBuffer[] {
  return Object.values(cut ?? {}).flatMap(({ file }) => (file instanceof Uint8Array ? [file.buffer as ArrayBuffer] : []));
}

/** An image's bytes from its base64 text, or undefined when it is not base64. */
function base64Bytes(text: string): Uint8Array | undefined {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}
