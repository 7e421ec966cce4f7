import { useEffect, useRef, useState, type FormEvent } from "react";
import { flushSync } from "react-dom";
import { redactKey } from "../../chat/provider";
import { chosenModel, configuredProviders, createProvider, PROVIDERS, providerKind, providerSavedLast } from "../../providers";
import { FoldedGroup } from "./FoldedGroup";
import { JupyterFields, jupyterSummary, ProviderFields, providerSummary } from "./SettingsFields";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { deleteEverything } from "./delete-everything";
import { setErasure } from "../../storage/erased";
import {
  checkApiBaseUrl,
  checkJupyterUrl,
  DEFAULT_SETTINGS,
  EMPTY_PROVIDER_CONFIG,
  loadSettings,
  mergeChanges,
  providerConfig,
  type ProviderConfig,
  type Settings,
} from "../../storage/settings";
import { useSettings } from "./settings-context";
import { kernelSocketAllowed } from "../../host/page-policy";
import { LONGEST_DEADLINE_MS } from "../../runtime/session-config";

/** Each number setting's smallest and largest value: a deadline of 0 is none, a limit of 0 would keep no output. */
const NUMBER_RANGES = {
  maxTokens: [1, 1_000_000],
  runTimeoutSeconds: [0, Math.floor(LONGEST_DEADLINE_MS / 1000)],
  outputLimitKiB: [1, 1024 * 1024],
} as const;

/** The Jupyter server's group name (also its key in the open groups and refused URLs). */
const JUPYTER_GROUP = "Jupyter server";

/** The Settings dialog: every setting Kiln has, saved in IndexedDB. */
export function SettingsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { settings, save } = useSettings();
  const dialog = useRef<HTMLDialogElement>(null);
  const [draft, setDraft] = useState<Settings>(settings);
  /** The settings as they were when the dialog opened: only what is changed from them is saved. */
  const opened = useRef<Settings>(settings);
  const [error, setError] = useState("");
  /** A refused Base URL's message, by provider. */
  const [baseUrlErrors, setBaseUrlErrors] = useState<Record<string, string>>({});
  const [models, setModels] = useState<Record<string, string[]>>({});
  /** Delete everything was pressed: its question is asked in place. */
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  /** The groups opened (all are folded when the dialog opens). */
  const [openGroups, setOpenGroups] = useState<ReadonlySet<string>>(new Set());
  const toggle = (name: string) =>
    setOpenGroups((groups) => {
      const next = new Set(groups);
      if (!next.delete(name)) next.add(name);
      return next;
    });

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      opened.current = settings;
      setDraft(settings);
      setError("");
      setBaseUrlErrors({});
      setOpenGroups(new Set());
      setConfirmingDelete(false);
      element.showModal();
    } else if (!open && element.open) {
      element.close();
    }
  }, [open, settings]);

  // Offer the models each provider offers. Only saved keys, to saved Base URLs: nothing typed here is
  // sent anywhere before Save.
  useEffect(() => {
    if (!open) return;
    let current = true;
    for (const kind of configuredProviders(settings)) {
      createProvider(settings, kind.id, "settings")
        ?.listModels()
        .then((ids) => current && setModels((all) => ({ ...all, [kind.id]: ids })))
        .catch(() => current && setModels((all) => ({ ...all, [kind.id]: [] })));
    }
    return () => {
      current = false;
    };
  }, [open, settings]);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const providers: Record<string, ProviderConfig> = {};
    const refused: Record<string, string> = {};
    for (const [id, config] of Object.entries(draft.providers)) {
      // Empty means the provider's own; anything else must be a URL the key may go to.
      const baseUrl = config.baseUrl.trim() ? checkApiBaseUrl(config.baseUrl) : { ok: true as const, url: "" };
      if (baseUrl.ok) providers[id] = { ...config, baseUrl: baseUrl.url };
      else refused[id] = baseUrl.message;
    }
    const jupyterUrl = draft.jupyter.url.trim() ? checkJupyterUrl(draft.jupyter.url) : { ok: true as const, url: "" };
    if (!jupyterUrl.ok) refused[JUPYTER_GROUP] = jupyterUrl.message;
    setBaseUrlErrors(refused);
    const first = Object.keys(refused)[0];
    if (first) {
      // Its group opens, so that the message and the field are seen.
      flushSync(() => setOpenGroups((groups) => new Set([...groups, ...Object.keys(refused).map((id) => providerKind(id)?.label ?? id)])));
      document.getElementById(first === JUPYTER_GROUP ? "kiln-jupyter-url" : `kiln-base-url-${first}`)?.focus();
      return;
    }
    try {
      // Fields not changed here keep what another tab saved since the dialog opened.
      const saved = { ...draft, providers, jupyter: { ...draft.jupyter, url: jupyterUrl.ok ? jupyterUrl.url : "" } };
      // A changed model of a provider in use is the one new conversations start with.
      saved.provider = providerSavedLast(opened.current, saved);
      const merged = mergeChanges(opened.current, saved, await loadSettings());
      await save(merged);
      // The page's policy names the server it was opened with: it is opened again for the new one.
      if (!kernelSocketAllowed(merged.jupyter.url)) location.reload();
      else onClose();
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      setError(`Settings could not be saved: ${Object.values(draft.providers).reduce((text, config) => redactKey(text, config.apiKey), message)}`);
    }
  };

  const setProvider = (id: string, change: Partial<ProviderConfig>) =>
    setDraft({ ...draft, providers: { ...draft.providers, [id]: { ...providerConfig(draft, id), ...change } } });
  const text = (key: "packageBaseUrl" | "lockFileUrl") => ({
    value: draft[key],
    onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [key]: event.target.value }),
  });
  const number = (key: keyof typeof NUMBER_RANGES) => {
    const [min, max] = NUMBER_RANGES[key];
    return {
      type: "number",
      min,
      max,
      value: draft[key],
      onChange: (event: { target: { value: string } }) =>
        setDraft({ ...draft, [key]: Math.min(max, Math.max(min, Math.round(Number(event.target.value)) || min)) }),
    };
  };

  /** The provider new conversations start with, as saved. */
  const newChatsProvider = chosenModel(settings)?.provider;

  return (
    <dialog ref={dialog} className="settings-dialog" aria-label="Settings" onClose={onClose}>
      <form onSubmit={onSubmit}>
        <h2>Settings</h2>
        {PROVIDERS.map((kind) => (
          <FoldedGroup
            key={kind.id}
            name={kind.label}
            summary={providerSummary(kind, providerConfig(draft, kind.id), providerConfig(settings, kind.id), kind.id === newChatsProvider)}
            open={openGroups.has(kind.label)}
            onToggle={() => toggle(kind.label)}
          >
            <ProviderFields
              kind={kind}
              config={draft.providers[kind.id] ?? EMPTY_PROVIDER_CONFIG}
              models={models[kind.id] ?? []}
              baseUrlError={baseUrlErrors[kind.id]}
              onChange={(change) => setProvider(kind.id, change)}
            />
          </FoldedGroup>
        ))}
        <FoldedGroup
          name={JUPYTER_GROUP}
          summary={jupyterSummary(draft.jupyter, settings.jupyter)}
          open={openGroups.has(JUPYTER_GROUP)}
          onToggle={() => toggle(JUPYTER_GROUP)}
        >
          <JupyterFields
            config={draft.jupyter}
            inMemory={Object.values(draft.providers).some((config) => config.apiKey && !config.rememberKey) || (!!draft.jupyter.token && !draft.jupyter.rememberToken)}
            urlError={baseUrlErrors[JUPYTER_GROUP]}
            onChange={(change) => setDraft({ ...draft, jupyter: { ...draft.jupyter, ...change } })}
          />
        </FoldedGroup>
        <fieldset>
          <legend>Chat</legend>
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
              <option value="auto">auto: the browser, else the Jupyter server, else the provider's sandbox</option>
              <option value="browser">browser only</option>
              <option value="provider">the provider's sandbox only</option>
              <option value="jupyter">Jupyter server only</option>
            </select>
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
        <fieldset>
          <legend>Your data</legend>
          {confirmingDelete ? (
            <ConfirmDelete
              name="everything Kiln keeps in this browser"
              question="Delete every conversation, notebook and file, your API keys and settings, Python's snapshot and the offline copy, in every tab of Kiln? This cannot be undone."
              onDelete={() =>
                void deleteEverything().catch((cause: unknown) =>
                  setErasure({ by: "this tab", done: false, waiting: false, failed: cause instanceof Error ? cause.message : String(cause) }),
                )
              }
              onKeep={() => setConfirmingDelete(false)}
            />
          ) : (
            <button type="button" className="danger-button" onClick={() => setConfirmingDelete(true)}>
              Delete everything Kiln keeps in this browser
            </button>
          )}
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
