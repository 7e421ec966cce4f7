import { describe, expect, it } from "vitest";
import { answerStdin, createInterruptBuffer, createStdinBuffer, expectStdin, requestInterrupt, SIGINT, waitForStdin } from "./shared-buffers";

describe("shared buffers", () => {
  it("passes an answer, including non-ASCII text, to a waiting reader", () => {
    const buffer = createStdinBuffer();
    expectStdin(buffer);
    answerStdin(buffer, "Grüße 👋");
    expect(waitForStdin(buffer, () => false)).toBe("Grüße 👋");
  });

  it("ends the wait with null when the prompt is closed or an interrupt arrives", () => {
    const buffer = createStdinBuffer();
    expectStdin(buffer);
    answerStdin(buffer, null);
    expect(waitForStdin(buffer, () => false)).toBeNull();
    const idle = createStdinBuffer();
    expectStdin(idle);
    expect(waitForStdin(idle, () => true)).toBeNull();
  });

  it("writes SIGINT for Pyodide to find", () => {
    const buffer = createInterruptBuffer();
    requestInterrupt(buffer);
    expect(new Int32Array(buffer)[0]).toBe(SIGINT);
  });
});
