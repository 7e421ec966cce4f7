import { describe, expect, it } from "vitest";
import { allowList, checkFetchUrl, exactFiles, lockFilePackageUrls } from "./fetch-allow-list";

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

describe("the exact files of a worker without network", () => {
  const base = "https://cdn.example/pyodide/v314.0.7/full/";
  const lock = JSON.stringify({
    info: { version: "314.0.7" },
    packages: {
      numpy: { name: "numpy", file_name: "numpy-2.0-cp314-pyodide_2026_0_wasm32.whl" },
      mirrored: { name: "mirrored", file_name: "https://mirror.example/wheels/mirrored-1.0-py3-none-any.whl" },
      nested: { name: "nested", file_name: "sub/nested-1.0-py3-none-any.whl" },
      folder: { name: "folder", file_name: "wheels/" },
      query: { name: "query", file_name: "q-1.0.whl?x=1" },
      fragment: { name: "fragment", file_name: "f-1.0.whl#x" },
      nameless: { name: "nameless" },
      odd: { name: "odd", file_name: 42 },
    },
  });

  it("are each lock file entry's file resolved against the package folder, as Pyodide resolves it", () => {
    expect(lockFilePackageUrls(lock, base)).toEqual([
      `${base}numpy-2.0-cp314-pyodide_2026_0_wasm32.whl`,
      "https://mirror.example/wheels/mirrored-1.0-py3-none-any.whl",
      `${base}sub/nested-1.0-py3-none-any.whl`,
    ]);
  });

  it("are none for text that is not a lock file, or without a package folder to resolve against", () => {
    expect(lockFilePackageUrls("<html>not json</html>", base)).toEqual([]);
    expect(lockFilePackageUrls("null", base)).toEqual([]);
    expect(lockFilePackageUrls(JSON.stringify({ packages: "numpy" }), base)).toEqual([]);
    expect(lockFilePackageUrls(lock, "")).toEqual([]);
  });

  it("allow those files within the configured folders and nothing else there", () => {
    const folders = allowList(["http://localhost:4173/pyodide/", base]);
    const exact = exactFiles(
      ["http://localhost:4173/pyodide/pyodide.asm.wasm", ...lockFilePackageUrls(lock, base)],
      folders,
    );
    const allowed = (url: string) => checkFetchUrl(url, exact).ok;
    expect(allowed("http://localhost:4173/pyodide/pyodide.asm.wasm")).toBe(true);
    expect(allowed(`${base}numpy-2.0-cp314-pyodide_2026_0_wasm32.whl`)).toBe(true);
    expect(allowed(`${base}sub/nested-1.0-py3-none-any.whl`)).toBe(true);
    // Outside every configured folder, although the lock file names it.
    expect(allowed("https://mirror.example/wheels/mirrored-1.0-py3-none-any.whl")).toBe(false);
    // Other paths under the folders, which a path of Python's choosing would be.
    expect(allowed("http://localhost:4173/pyodide/leak-SECRET")).toBe(false);
    expect(allowed("http://localhost:4173/pyodide/python_stdlib.zip")).toBe(false);
    expect(allowed(`${base}numpy-2.0-cp314-pyodide_2026_0_wasm32.whl/SECRET`)).toBe(false);
    expect(allowed(`${base}sub/`)).toBe(false);
    expect(allowed(`${base}numpy-2.0-cp314-pyodide_2026_0_wasm32.whl?SECRET`)).toBe(false);
  });
});
