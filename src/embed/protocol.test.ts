import { describe, expect, it } from "vitest";
import { isEmbedPage } from "../../vite/headers";
import { originAllowed, parseEmbedParams, parseHostMessage, parseOrigins, targetOrigins } from "./protocol";

describe("parseHostMessage", () => {
  it("accepts the four version 1 messages", () => {
    expect(parseHostMessage({ kiln: 1, type: "run", id: "a", code: "1+1" })).toEqual({ kiln: 1, type: "run", id: "a", code: "1+1" });
    expect(parseHostMessage({ kiln: 1, type: "run", id: 7, code: "", timeoutMs: 0 })).toEqual({
      kiln: 1,
      type: "run",
      id: 7,
      code: "",
      timeoutMs: 0,
    });
    // A deadline past what a browser timer keeps (which would fire at once) is cut to the longest one.
    expect(parseHostMessage({ kiln: 1, type: "run", id: 8, code: "", timeoutMs: 1e12 })).toMatchObject({ timeoutMs: 2 ** 31 - 1 });
    expect(parseHostMessage({ kiln: 1, type: "interrupt", extra: true })).toEqual({ kiln: 1, type: "interrupt" });
    expect(parseHostMessage({ kiln: 1, type: "restart" })).toEqual({ kiln: 1, type: "restart" });
    const bytes = new ArrayBuffer(3);
    expect(parseHostMessage({ kiln: 1, type: "writeFile", path: "a/b.csv", data: bytes })).toEqual({
      kiln: 1,
      type: "writeFile",
      path: "a/b.csv",
      data: bytes,
    });
    expect(parseHostMessage({ kiln: 1, type: "writeFile", path: "/tmp/x", data: "text" })?.type).toBe("writeFile");
  });

  it("ignores anything malformed", () => {
    for (const message of [
      null,
      "run",
      [],
      { type: "run", id: 1, code: "x" },
      { kiln: "1", type: "run", id: 1, code: "x" },
      { kiln: 2, type: "run", id: 1, code: "x" },
      { kiln: 1, type: "run", code: "x" },
      { kiln: 1, type: "run", id: null, code: "x" },
      { kiln: 1, type: "run", id: Number.NaN, code: "x" },
      { kiln: 1, type: "run", id: "x".repeat(257), code: "x" },
      { kiln: 1, type: "run", id: 1, code: 42 },
      { kiln: 1, type: "run", id: 1, code: "x", timeoutMs: -1 },
      { kiln: 1, type: "run", id: 1, code: "x", timeoutMs: "5" },
      { kiln: 1, type: "run", id: 1, code: "x", timeoutMs: Number.POSITIVE_INFINITY },
      { kiln: 1, type: "writeFile", path: "", data: "x" },
      { kiln: 1, type: "writeFile", path: "dir/", data: "x" },
      { kiln: 1, type: "writeFile", path: "a\0b", data: "x" },
      { kiln: 1, type: "writeFile", path: "a", data: new Uint8Array(2) },
      { kiln: 1, type: "writeFile", path: "a", data: { length: 1 } },
      { kiln: 1, type: "stream", id: 1, name: "stdout", text: "x" },
      { kiln: 1 },
    ]) {
      expect(parseHostMessage(message), JSON.stringify(message)).toBeUndefined();
    }
  });
});

describe("origins", () => {
  it("allows any origin by default", () => {
    for (const param of [null, "", " ", "*"]) {
      const policy = parseOrigins(param);
      expect(originAllowed(policy, "https://anyone.example")).toBe(true);
    }
  });

  it("allows only the listed origins, normalised; an unusable list allows none", () => {
    const policy = parseOrigins(" https://Course.Example/path , http://localhost:8080,nonsense");
    expect(policy).toEqual({ any: false, origins: ["https://course.example", "http://localhost:8080"] });
    expect(originAllowed(policy, "https://course.example")).toBe(true);
    expect(originAllowed(policy, "https://course.example:8443")).toBe(false);
    expect(originAllowed(policy, "null")).toBe(false);
    expect(parseOrigins("nonsense, file:///tmp/x")).toEqual({ any: false, origins: [] });
  });

  it("sends only to the parent's origin, or to the allowed ones while it is unknown", () => {
    const any = parseOrigins(null);
    const some = parseOrigins("https://a.example,https://b.example");
    expect(targetOrigins(any, undefined)).toEqual(["*"]);
    expect(targetOrigins(any, "https://host.example")).toEqual(["https://host.example"]);
    expect(targetOrigins(any, "null")).toEqual(["*"]);
    expect(targetOrigins(some, "https://b.example")).toEqual(["https://b.example"]);
    expect(targetOrigins(some, undefined)).toEqual(["https://a.example", "https://b.example"]);
    expect(targetOrigins(some, "https://evil.example")).toEqual(["https://a.example", "https://b.example"]);
    expect(targetOrigins(parseOrigins("nonsense"), undefined)).toEqual([]);
  });
});

describe("URL parameters", () => {
  it("reads code, autorun, readonly and origins", () => {
    const code = "print('a & b')\nx = 1 + 2";
    const options = parseEmbedParams(`?code=${encodeURIComponent(code)}&autorun=1&readonly=true&origins=https://a.example`);
    expect(options).toEqual({ code, autorun: true, readonly: true, origins: { any: false, origins: ["https://a.example"] } });
    expect(parseEmbedParams("?autorun=0")).toMatchObject({ code: "", autorun: false, readonly: false, origins: { any: true } });
  });
});

describe("embed page headers", () => {
  it("apply to embed.html only, under the app's base, spelled exactly", () => {
    expect(isEmbedPage("/embed.html?code=1")).toBe(true);
    expect(isEmbedPage("/embed.html#x")).toBe(true);
    expect(isEmbedPage("/kiln/embed.html", "/kiln/")).toBe(true);
    for (const path of ["/", "/index.html", "/assets/embed-abc.js", "/embed", "/x/embed", "/foo/embed.html", "/index.html/embed", "/%2e/embed", "/%2e/embed.html", "/./embed.html", "//embed.html", "/embed.html/", "/EMBED.HTML", "/embed%2ehtml", "/kiln/embed.html", "/?embed.html"]) {
      expect(isEmbedPage(path), path).toBe(false);
    }
  });
});
