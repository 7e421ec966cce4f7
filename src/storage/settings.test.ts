import { describe, expect, it } from "vitest";
import { checkApiBaseUrl, checkJupyterUrl, DEFAULT_SETTINGS, EMPTY_PROVIDER_CONFIG, mergeChanges, mergeSettings, PYODIDE_VERSION, PYTHON_VERSION, type Settings } from "./settings";
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

  it("reads settings of the one-key schema as the Anthropic provider's, and keeps keys per provider", () => {
    const old = { apiKey: "sk-ant-old", model: "claude-x", baseUrl: "https://proxy.example", rememberKey: false, maxTokens: 100 };
    expect(mergeSettings(old)).toEqual({
      ...DEFAULT_SETTINGS,
      maxTokens: 100,
      provider: "anthropic",
      providers: { anthropic: { ...EMPTY_PROVIDER_CONFIG, apiKey: "sk-ant-old", model: "claude-x", baseUrl: "https://proxy.example", rememberKey: false } },
    });
    const current = { providers: { "openai-compatible": { baseUrl: "http://localhost:11434/v1", apiKey: 5 } } };
    expect(mergeSettings(current).providers).toEqual({ "openai-compatible": { ...EMPTY_PROVIDER_CONFIG, baseUrl: "http://localhost:11434/v1" } });
  });

  it("lets the key go to https:, or to http: on this machine only", () => {
    expect(checkApiBaseUrl("https://api.anthropic.com")).toEqual({ ok: true, url: "https://api.anthropic.com" });
    expect(checkApiBaseUrl("http://localhost:11434/v1")).toEqual({ ok: true, url: "http://localhost:11434/v1" });
    expect(checkApiBaseUrl(" http://127.0.0.1:8080/ ")).toEqual({ ok: true, url: "http://127.0.0.1:8080" });
    expect(checkApiBaseUrl("http://[::1]:1234")).toEqual({ ok: true, url: "http://[::1]:1234" });
    expect(checkApiBaseUrl("https://proxy.example/anthropic/")).toEqual({ ok: true, url: "https://proxy.example/anthropic" });
  });

  it("refuses other URLs with a message that says what to do", () => {
    const refused = (raw: string) => {
      const result = checkApiBaseUrl(raw);
      if (result.ok) throw new Error(`accepted ${raw}`);
      return result.message;
    };
    expect(refused("http://example.com")).toMatch(/https:\/\/.*localhost/);
    expect(refused("http://localhost.example.com")).toMatch(/https:\/\//);
    expect(refused("ftp://x")).toMatch(/must start with https:\/\//);
    expect(refused("javascript:alert(1)")).toMatch(/must start with https:\/\//);
    expect(refused("https://user:pw@host")).toMatch(/user name or password/);
    expect(refused("https://user@host")).toMatch(/user name or password/);
    expect(refused("not a url")).toMatch(/not a valid URL/);
    expect(refused("")).toMatch(/not a valid URL/);
    expect(refused("https://host/v1?key=x")).toMatch(/query/);
    // A key pasted into the wrong field is not repeated back.
    expect(refused("sk-ant-api03-secret")).not.toContain("sk-ant");
  });
});

describe("mergeChanges", () => {
  it("saves only what was changed, over what another tab saved meanwhile", () => {
    const base: Settings = { ...DEFAULT_SETTINGS, providers: { anthropic: { ...EMPTY_PROVIDER_CONFIG, apiKey: "sk-a" } } };
    // Another tab adds a Gemini key and changes the Anthropic model.
    const current: Settings = {
      ...base,
      providers: { anthropic: { ...base.providers.anthropic, model: "claude-x" }, gemini: { ...EMPTY_PROVIDER_CONFIG, apiKey: "AIza-other" } },
    };
    // This tab changed the deadline and the Anthropic key.
    const changed: Settings = { ...base, runTimeoutSeconds: 45, providers: { anthropic: { ...base.providers.anthropic, apiKey: "sk-b" } } };
    expect(mergeChanges(base, changed, current)).toEqual({
      ...DEFAULT_SETTINGS,
      runTimeoutSeconds: 45,
      providers: { anthropic: { ...EMPTY_PROVIDER_CONFIG, apiKey: "sk-b", model: "claude-x" }, gemini: { ...EMPTY_PROVIDER_CONFIG, apiKey: "AIza-other" } },
    });
  });

  it("a field changed in both places takes this save's value", () => {
    const current = { ...DEFAULT_SETTINGS, maxTokens: 100 };
    expect(mergeChanges(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, maxTokens: 200 }, current).maxTokens).toBe(200);
    expect(mergeChanges(DEFAULT_SETTINGS, DEFAULT_SETTINGS, current).maxTokens).toBe(100);
  });

  it("reads the Jupyter server's settings, keeps an unknown Backend out, and merges a changed token alone", () => {
    const stored = mergeSettings({ backend: "jupyter", jupyter: { url: "http://localhost:8888", token: 7, rememberToken: false } });
    expect(stored.backend).toBe("jupyter");
    expect(stored.jupyter).toEqual({ url: "http://localhost:8888", token: "", rememberToken: false });
    expect(mergeSettings({ backend: "elsewhere" }).backend).toBe("auto");
    const base = mergeSettings({ jupyter: { url: "http://localhost:8888", token: "a" } });
    const changed = { ...base, jupyter: { ...base.jupyter, token: "b" } };
    const other = { ...base, jupyter: { ...base.jupyter, url: "https://hub.example/user/ada" } };
    expect(mergeChanges(base, changed, other).jupyter).toEqual({ url: "https://hub.example/user/ada", token: "b", rememberToken: true });
  });

  it("refuses a Server URL the token must not go to, in the field's own words", () => {
    expect(checkJupyterUrl("http://hub.example")).toEqual({
      ok: false,
      message: "The Server URL must use https://: plain http:// would send your token unencrypted. It is allowed only for localhost, 127.0.0.1 and [::1].",
    });
    expect(checkJupyterUrl("https://user:pw@hub.example")).toMatchObject({ ok: false, message: expect.stringContaining("the token goes in the Token field") });
    expect(checkJupyterUrl("http://127.0.0.1:8888/")).toEqual({ ok: true, url: "http://127.0.0.1:8888" });
  });
});
