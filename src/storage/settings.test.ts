import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, mergeSettings, PYODIDE_VERSION, PYTHON_VERSION } from "./settings";
import pyodidePackage from "pyodide/package.json";
import lock from "pyodide/pyodide-lock.json";

describe("settings", () => {
  it("default package base URL is the CDN folder of the pinned Pyodide", () => {
    expect(pyodidePackage.version).toBe(PYODIDE_VERSION);
    expect(lock.info.python.startsWith(`${PYTHON_VERSION}.`)).toBe(true);
    expect(DEFAULT_SETTINGS.packageBaseUrl).toBe(`https://cdn.jsdelivr.net/pyodide/v${PYODIDE_VERSION}/full/`);
  });

  it("keeps stored values of the right type and ignores the rest", () => {
    expect(mergeSettings({ runTimeoutSeconds: 5, outputLimitKiB: "lots", stray: 1, backend: 3 })).toEqual({
      ...DEFAULT_SETTINGS,
      runTimeoutSeconds: 5,
    });
    expect(mergeSettings(null)).toEqual(DEFAULT_SETTINGS);
  });
});
