import { describe, expect, it } from "vitest";
import { CUTS_TOLD_CHARS, pythonTool, toolResult, TOOL_RESULT_TEXT_LIMIT } from "./python-tool";

describe("toolResult", () => {
  it("tells the model in words what was cut from displays and the value, also when the text itself is cut", () => {
    const file = new Blob(["whole"]);
    const result = toolResult("call", {
      outcome: { status: "ok", value: { "text/plain": "v".repeat(100_000) }, valueCut: { "text/plain": { chars: 60_000_000, file } }, durationMs: 5 },
      events: [
        { type: "display", data: { "text/html": "<i>x</i>" }, cut: { "text/html": { chars: 12_000_000, file } } },
        { type: "display", data: {}, cut: { "image/png": { chars: 9_000_000 } } },
      ],
    });
    const text = result.content[0].type === "text" ? result.content[0].text : "";
    expect(text).toContain("[output cut:");
    expect(text.length).toBeLessThan(TOOL_RESULT_TEXT_LIMIT + 2000);
    expect(text).toContain(
      "[display: This HTML output is 12,000,000 characters, over the limit: only its first 8 are kept with the output, and the whole value is kept as a file to download. The person sees it as source text, not rendered.]",
    );
    expect(text).toContain("[display: This PNG output is 9,000,000 characters, over the limit: none of it is kept with the output, and it was not kept");
    expect(text).toContain("[result: This text output is 60,000,000 characters, over the limit: only its first 100,000 are kept");
  });

  it("bounds what it tells of cuts, however many there are and however their types are named", () => {
    const key = "k".repeat(3_000_000);
    const cuts = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [i ? `text/c${i}` : key, { chars: 100_001 }]));
    const result = toolResult("call", { outcome: { status: "ok", durationMs: 5 }, events: Array.from({ length: 1000 }, () => ({ type: "display" as const, data: {}, cut: cuts })) });
    const text = result.content[0].type === "text" ? result.content[0].text : "";
    expect(text).toContain("This unnamed output is 100,001 characters");
    expect(text).toContain("more outputs were cut to the limits as well.]");
    expect(text).not.toContain("kkkkkkkkkk");
    expect(text.length).toBeLessThan(TOOL_RESULT_TEXT_LIMIT + CUTS_TOLD_CHARS + 200);
  });
});

describe("pythonTool", () => {
  it("tells the model that IPython's display API and magics work, and that there is no shell", () => {
    const { description } = pythonTool("3.14.0", false);
    expect(description).toContain("from IPython.display import display, Markdown, HTML, Latex, Math, JSON, Image, clear_output");
    expect(description).toContain("display(obj, display_id=True) returns a handle whose .update(obj) replaces that output");
    expect(description).toContain("IPython magics work: %time, %timeit");
    expect(description).toContain("`%pip install name` loads one by name");
    expect(description).toContain("there is no shell, so !cmd runs nothing");
    expect(description).not.toContain("pip is not available");
  });
});
