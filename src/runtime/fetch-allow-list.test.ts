import { describe, expect, it } from "vitest";
import { allowList, checkFetchUrl } from "./fetch-allow-list";

const allowed = allowList([
  "http://localhost:4173/pyodide/",
  "https://cdn.example/pyodide/v314.0.7/full/",
  "http://127.0.0.1:9000/lock/pyodide-lock.json",
]);

const verdict = (url: string) => checkFetchUrl(url, allowed).ok;

describe("fetch allow-list", () => {
  it("allows files under a configured folder and a configured file", () => {
    expect(checkFetchUrl("http://localhost:4173/pyodide/pyodide.asm.wasm", allowed)).toEqual({
      ok: true,
      url: "http://localhost:4173/pyodide/pyodide.asm.wasm",
    });
    expect(verdict("https://cdn.example/pyodide/v314.0.7/full/numpy-2.0-cp314-pyodide_2026_0_wasm32.whl")).toBe(true);
    expect(verdict("http://127.0.0.1:9000/lock/pyodide-lock.json")).toBe(true);
  });

  it("refuses climbing out of a folder, plain or encoded", () => {
    expect(verdict("http://localhost:4173/pyodide/../index.html")).toBe(false);
    expect(verdict("http://localhost:4173/pyodide/%2e%2e/index.html")).toBe(false);
    expect(verdict("http://localhost:4173/pyodide/%2E%2E/%2E%2E/secret")).toBe(false);
    expect(verdict("http://localhost:4173/pyodide/..%2findex.html")).toBe(false);
    expect(verdict("http://localhost:4173/pyodide/%252e%252e/x")).toBe(false);
    expect(verdict("http://localhost:4173/pyodide\\..\\index.html")).toBe(false);
  });

  it("refuses other hosts, ports, schemes and prefix tricks", () => {
    expect(verdict("https://cdn.example.evil/pyodide/v314.0.7/full/x.whl")).toBe(false);
    expect(verdict("https://cdn.example/pyodide/v314.0.7/fullx/x.whl")).toBe(false);
    expect(verdict("https://cdn.example/pyodide/v314.0.7/full")).toBe(false);
    expect(verdict("http://localhost:4174/pyodide/pyodide.mjs")).toBe(false);
    expect(verdict("https://localhost:4173/pyodide/pyodide.mjs")).toBe(false);
    expect(verdict("http://127.0.0.1:9000/lock/other.json")).toBe(false);
    expect(verdict("http://127.0.0.1:9000/lock/pyodide-lock.json/x")).toBe(false);
    expect(verdict("file:///etc/passwd")).toBe(false);
    expect(verdict("data:text/plain,hi")).toBe(false);
    expect(verdict("blob:http://localhost:4173/abc")).toBe(false);
    expect(verdict("pyodide/pyodide.mjs")).toBe(false);
  });

  it("refuses credentials, queries and fragments", () => {
    expect(verdict("http://user:pw@localhost:4173/pyodide/pyodide.mjs")).toBe(false);
    expect(verdict("http://localhost:4173@evil.example/pyodide/pyodide.mjs")).toBe(false);
    expect(verdict("http://localhost:4173/pyodide/pyodide.mjs?secret=1")).toBe(false);
    expect(verdict("http://localhost:4173/pyodide/pyodide.mjs#x")).toBe(false);
  });

  it("leaves out configured URLs that are not plain http(s)", () => {
    expect(allowList(["", "not a url", "javascript:alert(1)", "http://a.example/x/?q=1"])).toEqual([]);
  });
});
