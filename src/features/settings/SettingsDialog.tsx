import { useEffect, useRef, useState, type FormEvent } from "react";
import { DEFAULT_SETTINGS, type Settings } from "../../storage/settings";
import { useSettings } from "./settings-context";

/** The Settings dialog: every setting Kiln has, saved in IndexedDB. */
export function SettingsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { settings, save } = useSettings();
  const dialog = useRef<HTMLDialogElement>(null);
  const [draft, setDraft] = useState<Settings>(settings);
  const [error, setError] = useState("");

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

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await save(draft);
      onClose();
    } catch (cause) {
      setError(`Settings could not be saved: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
  };

  const text = (key: "packageBaseUrl" | "lockFileUrl") => ({
    value: draft[key],
    onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [key]: event.target.value }),
  });
  const number = (key: "runTimeoutSeconds" | "outputLimitKiB") => ({
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
        <label>
          Run deadline (seconds, 0 = none)
          <input {...number("runTimeoutSeconds")} />
        </label>
        <label>
          Output limit per run (KiB)
          <input {...number("outputLimitKiB")} />
        </label>
        <label>
          Package base URL
          <input type="url" placeholder={DEFAULT_SETTINGS.packageBaseUrl} {...text("packageBaseUrl")} />
        </label>
        <label>
          Lock file URL
          <input type="url" placeholder="Pyodide's own (leave empty)" {...text("lockFileUrl")} />
        </label>
        <p className="hint">Package settings apply when Python next starts (Restart).</p>
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
