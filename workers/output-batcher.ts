import type { PostedEvent, StreamName, StreamRun } from "./python-api";

/** How long written text may wait before it is posted, while Python keeps writing. */
export const FLUSH_INTERVAL_MS = 16;

/**
 * The most runs of text (switches between stdout and stderr) one `streams` event holds: the
 * batcher posts as soon as it has collected this many. The page refuses a longer list before
 * reading it, as from a worker that was taken over.
 */
export const MAX_RUNS_PER_FLUSH = 10_000;

/**
 * Collects stdout/stderr bytes in the worker and posts them in batches, so a flood of
 * prints costs the page a few messages a frame rather than one per print: each flush is one
 * `streams` event holding the text of both streams in the order it was written. Caps each
 * run's output; what goes past the cap is counted, not sent.
 */
export class OutputBatcher {
  private pending: StreamRun[] = [];
  private readonly decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  private lastFlush = 0;
  private written = 0;
  private limit = Infinity;
  private dropped = 0;

  constructor(
    private readonly post: (event: PostedEvent) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Start a run with a fresh cap. */
  begin(limitBytes: number): void {
    this.written = 0;
    this.dropped = 0;
    this.limit = limitBytes;
    this.lastFlush = this.now();
  }

  /** Bytes dropped so far in this run. */
  get droppedBytes(): number {
    return this.dropped;
  }

  write(name: StreamName, bytes: Uint8Array): void {
    const room = this.limit - this.written;
    if (room <= 0) {
      // The notice goes out with the first byte dropped, also when the cap keeps nothing at all.
      if (!this.written && !this.dropped) this.post({ type: "truncated", limitBytes: this.limit });
      this.dropped += bytes.length;
      return;
    }
    let chunk = bytes;
    if (bytes.length > room) {
      chunk = bytes.subarray(0, room);
      this.dropped += bytes.length - room;
    }
    this.written += chunk.length;
    const text = this.decoders[name].decode(chunk, { stream: true });
    const last = this.pending[this.pending.length - 1];
    if (last && last[0] === name) last[1] += text;
    else if (text) this.pending.push([name, text]);
    if (this.pending.length >= MAX_RUNS_PER_FLUSH) this.flush();
    if (this.written >= this.limit) {
      this.flush();
      this.post({ type: "truncated", limitBytes: this.limit });
    } else if (this.now() - this.lastFlush >= FLUSH_INTERVAL_MS) {
      this.flush();
    }
  }

  /** Post everything collected so far. */
  flush(): void {
    this.lastFlush = this.now();
    const runs = this.pending.filter(([, text]) => text);
    this.pending = [];
    if (runs.length) this.post({ type: "streams", runs });
  }
}
