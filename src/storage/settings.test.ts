import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, mergeSettings, PYODIDE_VERSION } from "./settings";
import pyodidePackage from "pyodide/package.json";

describe("settings", () => {
  it("default package base URL is the CDN folder of the pinned Pyodide", () => {
    expect(pyodidePackage.version).toBe(PYODIDE_VERSION);
    expect(DEFAULT_SETTINGS.packageBaseUrl).toBe(`https://cdn.jsdelivr.net/pyodide/v${PYODIDE_VERSION}/full/`);
  });

  it("keeps stored values of the right type and ignores the rest", () => {
    expect(mergeSettings({ runTimeoutSeconds: 5, outputLimitKiB: "lots", stray: 1 })).toEqual({
      ...DEFAULT_SETTINGS,
      runTimeoutSeconds: 5,
    });
    expect(mergeSettings(null)).toEqual(DEFAULT_SETTINGS);
  });
});
