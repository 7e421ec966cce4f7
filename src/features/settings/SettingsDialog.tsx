import { useEffect, useRef, useState, type FormEvent } from "react";
import { listModels, redactKey } from "../../providers/anthropic/client";
import { checkApiBaseUrl, DEFAULT_SETTINGS, providerSettings, type Settings } from "../../storage/settings";
import { useSettings } from "./settings-context";

/** Code execution tool versions the API knows, newest first. */
const SANDBOX_TOOLS = ["code_execution_20260521", "code_execution_20260120", "code_execution_20250825", "code_execution_20250522"];

/** The Settings dialog: every setting Kiln has, saved in IndexedDB. */
export function SettingsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { settings, save } = useSettings();
  const dialog = useRef<HTMLDialogElement>(null);
  const baseUrlInput = useRef<HTMLInputElement>(null);
  const [draft, setDraft] = useState<Settings>(settings);
  const [error, setError] = useState("");
  const [baseUrlError, setBaseUrlError] = useState("");
  const [models, setModels] = useState<string[]>([]);

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      setDraft(settings);
      setError("");
      setBaseUrlError("");
      element.showModal();
    } else if (!open && element.open) {
      element.close();
    }
  }, [open, settings]);

  // Offer the models the saved key can use. Only a saved key, to its saved Base URL: nothing typed here is
  // sent anywhere before Save.
  useEffect(() => {
    if (!open || !settings.apiKey) return;
    let current = true;
    listModels(providerSettings(settings))
      .then((ids) => current && setModels(ids))
      .catch(() => current && setModels([]));
    return () => {
      current = false;
    };
  }, [open, settings]);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    // Empty means the default; anything else must be a URL the key may go to.
    const baseUrl = draft.baseUrl.trim() ? checkApiBaseUrl(draft.baseUrl) : { ok: true as const, url: "" };
    if (!baseUrl.ok) {
      setBaseUrlError(baseUrl.message);
      baseUrlInput.current?.focus();
      return;
    }
    setBaseUrlError("");
    try {
      await save({ ...draft, baseUrl: baseUrl.url });
      onClose();
    } catch (cause) {
      setError(`Settings could not be saved: ${redactKey(cause instanceof Error ? cause.message : String(cause), draft.apiKey)}`);
    }
  };

  const text = (key: "apiKey" | "model" | "baseUrl" | "packageBaseUrl" | "lockFileUrl" | "sandboxTool") => ({
    value: draft[key],
    onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [key]: event.target.value }),
  });
  const number = (key: "runTimeoutSeconds" | "outputLimitKiB" | "maxTokens") => ({
    type: "number",
    min: 0,
    value: draft[key],
    onChange: (event: { target: { value: string } }) =>
      setDraft({ ...draft, [key]: Math.max(0, Number(event.target.value) || 0) }),
  });

  return (
    <dialog ref={dialog} className="settings-dialog" aria-label="Settings" onClose={onClose}>
      <form onSubmit={onSubmit}>
        <h2>Settings</h2>
        <fieldset>
          <legend>Claude</legend>
          <label>
            API key
            <input type="password" autoComplete="off" placeholder="sk-ant-…" {...text("apiKey")} />
          </label>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={!draft.rememberKey}
              onChange={(event) => setDraft({ ...draft, rememberKey: !event.target.checked })}
            />
            Don't remember this key (keep it in this tab's memory only)
          </label>
          <label>
            Model
            <input list="kiln-models" {...text("model")} />
            <datalist id="kiln-models">
              {models.map((model) => (
                <option key={model} value={model} />
              ))}
            </datalist>
          </label>
          <label>
            Base URL
            <input
              ref={baseUrlInput}
              type="text"
              inputMode="url"
              placeholder={DEFAULT_SETTINGS.baseUrl}
              aria-invalid={baseUrlError ? true : undefined}
              aria-describedby={baseUrlError ? "kiln-base-url-error" : undefined}
              {...text("baseUrl")}
            />
          </label>
          {baseUrlError && (
            <p id="kiln-base-url-error" role="alert">
              {baseUrlError}
            </p>
          )}
          <label>
            Max output tokens
            <input {...number("maxTokens")} />
          </label>
          <label>
            Backend
            <select
              value={draft.backend}
              onChange={(event) => setDraft({ ...draft, backend: event.target.value as Settings["backend"] })}
            >
              <option value="auto">auto: the browser, else Anthropic's sandbox</option>
              <option value="browser">browser only</option>
              <option value="provider">Anthropic's sandbox only</option>
            </select>
          </label>
          <label>
            Code execution tool
            <input placeholder={DEFAULT_SETTINGS.sandboxTool} list="kiln-sandbox-tools" {...text("sandboxTool")} />
            <datalist id="kiln-sandbox-tools">
              {SANDBOX_TOOLS.map((tool) => (
                <option key={tool} value={tool} />
              ))}
            </datalist>
          </label>
        </fieldset>
        <fieldset>
          <legend>Python</legend>
          <label>
            Run deadline (seconds, 0 = none)
            <input {...number("runTimeoutSeconds")} />
          </label>
          <label>
            Output limit per run (KiB)
            <input {...number("outputLimitKiB")} />
          </label>
          <label>
            Package download URL
            <input type="url" placeholder={DEFAULT_SETTINGS.packageBaseUrl} {...text("packageBaseUrl")} />
          </label>
          <label>
            Lock file URL
            <input type="url" placeholder="Pyodide's own (leave empty)" {...text("lockFileUrl")} />
          </label>
          <p className="hint">Package settings apply when Python next starts (Restart).</p>
        </fieldset>
        {error && <p role="alert">{error}</p>}
        <div className="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit">Save</button>
        </div>
      </form>
    </dialog>
  );
}
