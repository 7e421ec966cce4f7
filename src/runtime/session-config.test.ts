import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../storage/settings";
import { sessionConfig } from "./session-config";

describe("sessionConfig", () => {
  const config = (runTimeoutSeconds: number) => sessionConfig({ ...DEFAULT_SETTINGS, runTimeoutSeconds }, { allowInput: false, network: false });

  it("gives runs the deadline set, 0 for none", () => {
    expect(config(120).timeoutMs).toBe(120_000);
    expect(config(0).timeoutMs).toBe(0);
  });

  it("cuts a deadline longer than a browser timer keeps, instead of letting it fire at once", () => {
    const longest = config(99_999_999).timeoutMs;
    expect(longest).toBe(2 ** 31 - 1);
    // Checked against the timer itself: the cut deadline has not fired after a moment.
    return new Promise<void>((resolve, reject) => {
      const fired = setTimeout(() => reject(new Error("the deadline fired at once")), longest);
      setTimeout(() => {
        clearTimeout(fired);
        resolve();
      }, 50);
    });
  });
});
