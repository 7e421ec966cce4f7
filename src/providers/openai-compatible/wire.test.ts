import { describe, expect, it } from "vitest";
import { toChatMessages } from "./wire";

describe("toChatMessages", () => {
  it("puts tool results in tool messages by call id, their images after them, and invalid arguments back as sent", () => {
    const png = { type: "image" as const, mediaType: "image/png", data: "iVBORw0KGgo" };
    const out = toChatMessages("system words", [
      { role: "user", content: [{ type: "text", text: "plot it" }] },
      {
        role: "assistant",
        content: [
          { type: "provider", provider: "anthropic", data: { type: "thinking" }, text: "" },
          { type: "text", text: "Plotting." },
          { type: "tool_call", id: "call_1", name: "python", input: { code: "plot()" } },
          { type: "tool_call", id: "call_2", name: "python", input: {}, invalidInput: "{oops" },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", callId: "call_1", content: [{ type: "text", text: "[display: image 1 attached]" }, png] },
          { type: "tool_result", callId: "call_2", content: [{ type: "text", text: "Not run" }], isError: true },
          { type: "text", text: "and now?" },
        ],
      },
    ]);
    expect(out).toEqual([
      { role: "system", content: "system words" },
      { role: "user", content: "plot it" },
      {
        role: "assistant",
        content: "Plotting.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "python", arguments: '{"code":"plot()"}' } },
          { id: "call_2", type: "function", function: { name: "python", arguments: "{oops" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "[display: image 1 attached]" },
      { role: "tool", tool_call_id: "call_2", content: "Not run" },
      {
        role: "user",
        content: [
          { type: "text", text: "Images from the python tool (1):" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo" } },
          { type: "text", text: "and now?" },
        ],
      },
    ]);
  });
});
