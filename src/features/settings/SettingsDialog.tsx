import { useEffect, useRef, useState, type FormEvent } from "react";
import { listModels } from "../../providers/anthropic/client";
import { DEFAULT_SETTINGS, type Settings } from "../../storage/settings";
import { useSettings } from "./settings-context";

/** Code execution tool versions the API knows, newest first. */
const SANDBOX_TOOLS = ["code_execution_20260521", "code_execution_20260120", "code_execution_20250825", "code_execution_20250522"];

/** The Settings dialog: every setting Kiln has, saved in IndexedDB. */
export function SettingsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { settings, save } = useSettings();
  const dialog = useRef<HTMLDialogElement>(null);
  const [draft, setDraft] = useState<Settings>(settings);
  const [error, setError] = useState("");
  const [models, setModels] = useState<string[]>([]);

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      setDraft(settings);
      setError("");
      element.showModal();
    } else if (!open && element.open) {
      element.close();
    }
  }, [open, settings]);

  // Once a key works, offer the models it can use.
  useEffect(() => {
    if (!open || !draft.apiKey) return;
    const timer = setTimeout(() => {
      listModels({ apiKey: draft.apiKey, baseUrl: draft.baseUrl, model: draft.model, maxTokens: draft.maxTokens })
        .then(setModels)
        .catch(() => setModels([]));
    }, 400);
    return () => clearTimeout(timer);
  }, [open, draft.apiKey, draft.baseUrl, draft.model, draft.maxTokens]);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await save(draft);
      onClose();
    } catch (cause) {
      setError(`Settings could not be saved: ${cause instanceof Error ? cause.message : String(cause)}`);
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
            <input type="url" placeholder={DEFAULT_SETTINGS.baseUrl} {...text("baseUrl")} />
          </label>
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
