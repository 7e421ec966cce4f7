// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_SETTINGS, EMPTY_PROVIDER_CONFIG, type Settings } from "../../storage/settings";
import { SettingsDialog } from "./SettingsDialog";

const listModels = vi.fn(async () => ["claude-test"]);
vi.mock("../../providers/anthropic/client", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../../providers/anthropic/client")>()),
  listModels: (...args: unknown[]) => listModels(...(args as [])),
}));

let saved: Settings = DEFAULT_SETTINGS;
const save = vi.fn(async (next: Settings) => {
  saved = next;
});
vi.mock("./settings-context", () => ({ useSettings: () => ({ settings: saved, loaded: true, save }) }));
// Storage as the dialog reads it again on Save: what was saved last.
vi.mock("../../storage/settings", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../../storage/settings")>()),
  loadSettings: async () => saved,
}));

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root;
let container: HTMLElement;

beforeEach(() => {
  // jsdom has <dialog> without its modal methods.
  HTMLDialogElement.prototype.showModal ??= function (this: HTMLDialogElement) {
    this.open = true;
  };
  HTMLDialogElement.prototype.close ??= function (this: HTMLDialogElement) {
    this.open = false;
  };
  saved = DEFAULT_SETTINGS;
  listModels.mockClear();
  save.mockClear();
  container = document.body.appendChild(document.createElement("div"));
  root = createRoot(container);
});

afterEach(() => {
  act(() => root.unmount());
  container.remove();
});

const render = (onClose = () => {}) => act(() => root.render(<SettingsDialog open onClose={onClose} />));

/** The input inside the label whose text starts with `name` (as the e2e helper finds it). */
function field(name: string): HTMLInputElement {
  const label = [...container.querySelectorAll("label")].find((element) => element.textContent?.trim().startsWith(name));
  const input = label?.querySelector("input");
  if (!input) throw new Error(`no field ${name}`);
  return input;
}

async function type(name: string, value: string) {
  const input = field(name);
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
  await act(async () => {
    setValue?.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function pressSave() {
  const button = [...container.querySelectorAll("button")].find((element) => element.textContent === "Save");
  await act(async () => {
    button?.click();
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
}

/** Settings whose Anthropic provider has these fields. */
const anthropicSaved = (fields: Record<string, string>) =>
  expect.objectContaining({ providers: expect.objectContaining({ anthropic: expect.objectContaining(fields) }) });

describe("SettingsDialog", () => {
  it("sends nothing with a key while it is typed; saves it on Save", async () => {
    vi.useFakeTimers();
    try {
      render();
      await type("API key", "sk-ant-typed");
      await type("Base URL", "https://proxy.example");
      await act(async () => {
        vi.advanceTimersByTime(5000);
      });
    } finally {
      vi.useRealTimers();
    }
    expect(listModels).not.toHaveBeenCalled();
    const onClose = vi.fn();
    render(onClose);
    await pressSave();
    expect(save).toHaveBeenCalledWith(anthropicSaved({ apiKey: "sk-ant-typed", baseUrl: "https://proxy.example" }));
    expect(onClose).toHaveBeenCalled();
  });

  it("lists models only with the saved key and Base URL", async () => {
    saved = { ...DEFAULT_SETTINGS, providers: { anthropic: { ...EMPTY_PROVIDER_CONFIG, apiKey: "sk-ant-saved", baseUrl: "http://localhost:8080" } } };
    render();
    await act(async () => {});
    expect(listModels).toHaveBeenCalledTimes(1);
    expect(listModels).toHaveBeenCalledWith(expect.objectContaining({ apiKey: "sk-ant-saved", baseUrl: "http://localhost:8080" }));
    await type("API key", "sk-ant-other");
    await type("Base URL", "https://elsewhere.example");
    expect(listModels).toHaveBeenCalledTimes(1);
  });

  it("does not save a Base URL the key may not go to, and says why next to the field", async () => {
    render();
    await type("API key", "sk-ant-typed");
    await type("Base URL", "http://example.com");
    await pressSave();
    expect(save).not.toHaveBeenCalled();
    const input = field("Base URL");
    expect(input.getAttribute("aria-invalid")).toBe("true");
    const message = document.getElementById(input.getAttribute("aria-describedby") ?? "");
    expect(message?.textContent).toMatch(/https:\/\//);
    expect(document.activeElement).toBe(input);

    await type("Base URL", "http://127.0.0.1:8080/");
    await pressSave();
    expect(save).toHaveBeenCalledWith(anthropicSaved({ baseUrl: "http://127.0.0.1:8080" }));
  });
});
