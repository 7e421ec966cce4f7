import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  FRAME_CONTENT_SECURITY_POLICY,
  FRAME_RESIZE_SCRIPT,
  FRAME_RESIZE_SCRIPT_SHA256,
} from "./frame-policy";

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

describe("frame policy", () => {
  it("has the resize script's real hash (edit the script, update the hash)", () => {
    expect(FRAME_RESIZE_SCRIPT_SHA256).toBe(sha256(FRAME_RESIZE_SCRIPT));
  });

  it("is the script's text, without tags", () => {
    expect(FRAME_RESIZE_SCRIPT).not.toMatch(/<\/?script/i);
    expect(FRAME_RESIZE_SCRIPT).toContain("kilnFrameHeight");
  });

  it("allows only the resize script and loads nothing remote", () => {
    const directives = new Map(
      FRAME_CONTENT_SECURITY_POLICY.split(";").map((directive) => {
        const [name, ...sources] = directive.trim().split(/\s+/);
        return [name, sources.join(" ")] as const;
      }),
    );
    expect(Object.fromEntries(directives)).toEqual({
      "default-src": "'none'",
      "img-src": "data: blob:",
      "style-src": "'unsafe-inline'",
      "font-src": "data:",
      "media-src": "data: blob:",
      "script-src": sha256(FRAME_RESIZE_SCRIPT),
      "connect-src": "'none'",
      "form-action": "'none'",
      "base-uri": "'none'",
    });
  });
});
