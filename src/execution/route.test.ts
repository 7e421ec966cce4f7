import { describe, expect, it } from "vitest";
import { missingModules, moduleNotFound, route, routeAfterBrowserError, type RouteInput } from "./route";

const SANDBOX = { label: "Anthropic's sandbox", provider: "Anthropic" };
const NO_SANDBOX = "Add an Anthropic API key in Settings to run such code on Anthropic's sandbox.";
const lockImports = new Set(["numpy", "pandas", "kilntiny"]);
const input = (imports: string[], available: string[], rest: Partial<RouteInput> = {}): RouteInput => ({
  imports: { imports, available },
  lockImports,
  backend: "auto",
  sandbox: SANDBOX,
  noSandbox: NO_SANDBOX,
  ...rest,
});

describe("route", () => {
  it("keeps standard library, lock file and local modules in the browser", () => {
    expect(route(input(["json", "numpy", "mymodule"], ["json", "mymodule"]))).toEqual({ where: "browser" });
    expect(route(input([], []))).toEqual({ where: "browser" });
  });

  it("sends code importing a module the browser lacks to the provider in auto mode", () => {
    const decision = route(input(["torch", "numpy", "json"], ["json"]));
    expect(decision).toEqual({ where: "provider", reason: "torch is not available in the browser", modules: ["torch"] });
    expect(route(input(["torch", "tensorflow"], []))).toMatchObject({
      where: "provider",
      reason: "torch, tensorflow are not available in the browser",
    });
  });

  it("without a key, says the run is unavailable and what would make it work", () => {
    const decision = route(input(["torch"], [], { sandbox: undefined }));
    expect(decision.where).toBe("unavailable");
    expect(decision).toMatchObject({ modules: ["torch"] });
    expect((decision as { reason: string }).reason).toMatch(/torch is not available in the browser\. Add an Anthropic API key in Settings/);
  });

  it("asks first where code must not leave the browser unasked", () => {
    const decision = route(input(["torch"], [], { askFirst: true }));
    expect(decision).toEqual({
      where: "unavailable",
      reason: "torch is not available in the browser. Press Run on Anthropic to run it on Anthropic's sandbox.",
      modules: ["torch"],
    });
  });

  it("browser mode never routes to the provider", () => {
    expect(route(input(["torch"], [], { backend: "browser" }))).toEqual({ where: "browser" });
  });

  it("provider mode always routes to the provider, even for plain code", () => {
    expect(route(input([], [], { backend: "provider" }))).toMatchObject({ where: "provider", modules: [] });
    expect(route(input(["json"], ["json"], { backend: "provider", sandbox: undefined })).where).toBe("unavailable");
  });

  it("finds the missing modules", () => {
    expect(missingModules({ imports: { imports: ["a", "numpy", "b"], available: ["b"] }, lockImports })).toEqual(["a"]);
  });
});

describe("after a browser ModuleNotFoundError", () => {
  const error = (evalue: string) => ({ ename: "ModuleNotFoundError", evalue, traceback: "" });
  const rest = { lockImports, backend: "auto" as const, sandbox: SANDBOX, noSandbox: NO_SANDBOX };

  it("reads the module name", () => {
    expect(moduleNotFound(error("No module named 'torch'"))).toBe("torch");
    expect(moduleNotFound(error("No module named 'torch.nn'"))).toBe("torch");
    expect(moduleNotFound({ ename: "ValueError", evalue: "No module named 'x'", traceback: "" })).toBeUndefined();
    expect(moduleNotFound(undefined)).toBeUndefined();
  });

  it("retries once on the provider for a module that is nowhere in the browser", () => {
    expect(routeAfterBrowserError(error("No module named 'torch'"), rest)).toMatchObject({ where: "provider", modules: ["torch"] });
    expect(routeAfterBrowserError(error("No module named 'numpy'"), rest)).toEqual({ where: "browser" });
    expect(routeAfterBrowserError(error("No module named 'torch'"), { ...rest, backend: "browser" })).toEqual({ where: "browser" });
    expect(routeAfterBrowserError(error("No module named 'torch'"), { ...rest, sandbox: undefined }).where).toBe("unavailable");
  });
});

describe("route with a Jupyter server", () => {
  const JUPYTER = { label: "the Jupyter server" };

  it("in auto mode runs in the browser, else on the Jupyter server before the provider's sandbox", () => {
    expect(route(input(["numpy"], [], { jupyter: JUPYTER }))).toEqual({ where: "browser" });
    expect(route(input(["torch"], [], { jupyter: JUPYTER }))).toEqual({ where: "jupyter", reason: "torch is not available in the browser", modules: ["torch"] });
  });

  it("runs everything on the server with the Backend setting Jupyter server only, and says when none is set", () => {
    expect(route(input(["json"], ["json"], { jupyter: JUPYTER, backend: "jupyter" }))).toMatchObject({ where: "jupyter" });
    const none = route(input(["json"], ["json"], { backend: "jupyter" }));
    expect(none.where).toBe("unavailable");
    expect((none as { reason: string }).reason).toMatch(/No Jupyter server is set: add its Server URL/);
  });

  it("keeps the Backend setting provider on the provider's sandbox", () => {
    expect(route(input(["torch"], [], { jupyter: JUPYTER, backend: "provider" }))).toMatchObject({ where: "provider" });
  });

  it("asks first in the Playground, naming the button", () => {
    const decision = route(input(["torch"], [], { jupyter: JUPYTER, askFirst: true }));
    expect((decision as { reason: string }).reason).toMatch(/Press Run on Jupyter server/);
  });

  it("retries a run-time ModuleNotFoundError on the server", () => {
    const error = { ename: "ModuleNotFoundError", evalue: "No module named 'torch'", traceback: "" };
    expect(routeAfterBrowserError(error, { lockImports, backend: "auto", noSandbox: NO_SANDBOX, jupyter: JUPYTER })).toMatchObject({ where: "jupyter" });
  });
});
