import { describe, expect, it } from "vitest";
import { DISPLAY_ID_CHARS, DISPLAY_TEXT_CHARS } from "./output-limits";
import type { PostedEvent } from "./python-api";
import { RunOutput } from "./run-output";

function setup(limitBytes = 1000) {
  const posted: { event: PostedEvent; transfer?: Transferable[] }[] = [];
  const output = new RunOutput((event, transfer) => posted.push({ event, transfer }));
  output.begin(limitBytes);
  const events = () => posted.map(({ event }) => event);
  return { output, posted, events, print: (text: string) => output.write("stdout", new TextEncoder().encode(text)) };
}

describe("RunOutput", () => {
  it("posts what was printed before a display, then the display", () => {
    const { output, events, print } = setup();
    print("before\n");
    output.emit("display", JSON.stringify({ "text/plain": "shown" }));
    expect(events()).toEqual([
      { type: "streams", runs: [["stdout", "before\n"]] },
      { type: "display", data: { "text/plain": "shown" } },
    ]);
  });

  it("clears at once, or with wait=True only when the next output comes", () => {
    const { output, events, print } = setup();
    output.emit("clear", JSON.stringify({ wait: false }));
    expect(events()).toEqual([{ type: "clear-output" }]);
    output.emit("clear", JSON.stringify({ wait: true }));
    expect(events()).toHaveLength(1);
    print("next");
    output.flush();
    expect(events().slice(1)).toEqual([{ type: "clear-output" }, { type: "streams", runs: [["stdout", "next"]] }]);
  });

  it("a new run forgets a clear that waited", () => {
    const { output, events, print } = setup();
    output.emit("clear", JSON.stringify({ wait: true }));
    output.begin(1000);
    print("x");
    output.flush();
    expect(events()).toEqual([{ type: "streams", runs: [["stdout", "x"]] }]);
  });

  it("cuts a display's text to its limit, keeps the whole as bytes it transfers, and cuts a display id", () => {
    const { output, posted } = setup();
    const long = "y".repeat(DISPLAY_TEXT_CHARS + 10);
    output.emit("display_id", JSON.stringify({ id: "i".repeat(DISPLAY_ID_CHARS + 5), data: { "text/plain": long }, update: true }));
    const [{ event, transfer }] = posted;
    if (event.type !== "update-display") throw new Error(`posted ${event.type}`);
    expect(event.displayId).toHaveLength(DISPLAY_ID_CHARS);
    expect(event.data["text/plain"].length).toBeLessThan(long.length);
    const file = event.cut?.["text/plain"]?.file;
    expect(file).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(file as Uint8Array)).toBe(long);
    expect(transfer).toEqual([(file as Uint8Array).buffer]);
  });

  it("sends a cut value as a Blob that no browser renders, when Blobs reach the page", async () => {
    const { output } = setup();
    output.sendBlobs = true;
    const long = "z".repeat(DISPLAY_TEXT_CHARS + 1);
    const file = output.capped({ "text/html": long }).cut?.["text/html"]?.file;
    expect(file).toBeInstanceOf(Blob);
    expect((file as Blob).type).toBe("application/octet-stream");
    expect(await (file as Blob).text()).toBe(long);
  });

  it("counts what a run prints past its limit instead of sending it, and says the text was cut", () => {
    const { output, events, print } = setup(3);
    print("abcdef");
    output.flush();
    expect(events()).toEqual([
      { type: "streams", runs: [["stdout", "abc"]] },
      { type: "truncated", limitBytes: 3 },
    ]);
    expect(output.droppedBytes).toBe(3);
  });
});
