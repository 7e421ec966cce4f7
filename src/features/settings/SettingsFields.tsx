import type { ProviderKind } from "../../chat/provider";
import { kernelSocketAllowed } from "../../host/page-policy";
import type { JupyterConfig, ProviderConfig } from "../../storage/settings";

/** The Jupyter server's URL and token (see docs/jupyter.md). */
export function JupyterFields({
  config,
  urlError,
  inMemory,
  onChange,
}: {
  config: JupyterConfig;
  urlError?: string;
  /** A key or the token is kept in this tab's memory only (a reload forgets it). */
  inMemory: boolean;
  onChange: (change: Partial<JupyterConfig>) => void;
}) {
  return (
    <>
      <label>
        Server URL
        <input
          id="kiln-jupyter-url"
          type="text"
          inputMode="url"
          placeholder="http://localhost:8888"
          aria-invalid={urlError ? true : undefined}
          aria-describedby={urlError ? "kiln-jupyter-url-error" : undefined}
          value={config.url}
          onChange={(event) => onChange({ url: event.target.value })}
        />
      </label>
      {urlError && (
        <p id="kiln-jupyter-url-error" role="alert">
          {urlError}
        </p>
      )}
      <label>
        Token
        <input type="password" autoComplete="off" value={config.token} onChange={(event) => onChange({ token: event.target.value })} />
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={!config.rememberToken} onChange={(event) => onChange({ rememberToken: !event.target.checked })} />
        Don't remember this key (keep it in this tab's memory only)
      </label>
      <p className="hint">Code runs there when the browser cannot run it (or always, with the Backend setting). The token is sent only to this server.</p>
      {!kernelSocketAllowed(config.url) && (
        <p className="hint">
          Saving reloads the page: a page can connect only to the Jupyter server that was set when it was opened.
          {inMemory && " Keys and tokens kept in this tab's memory only will have to be entered again."}
        </p>
      )}
    </>
  );
}

/** One line on the Jupyter server: its URL and its token, or "not set up". */
export function jupyterSummary(config: JupyterConfig, saved: JupyterConfig): string {
  if (!config.url.trim()) return "not set up";
  const parts = [config.url.trim()];
  if (!config.token) parts.push("no token");
  else if (config.token !== saved.token || config.rememberToken !== saved.rememberToken) parts.push("token changed, not stored yet");
  else parts.push(config.rememberToken ? "token stored" : "token for this tab only");
  return parts.join(" · ");
}

interface ProviderFieldsProps {
  kind: ProviderKind;
  config: ProviderConfig;
  models: string[];
  baseUrlError?: string;
  onChange: (change: Partial<ProviderConfig>) => void;
}

/** One provider's key, Base URL and model (and sandbox tool, where it has a sandbox), in its group. */
export function ProviderFields({ kind, config, models, baseUrlError, onChange }: ProviderFieldsProps) {
  const id = kind.id;
  return (
    <>
      <label>
        API key{kind.keyOptional ? " (optional)" : ""}
        <input
          type="password"
          autoComplete="off"
          placeholder={kind.keyHint}
          value={config.apiKey}
          onChange={(event) => onChange({ apiKey: event.target.value })}
        />
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={!config.rememberKey} onChange={(event) => onChange({ rememberKey: !event.target.checked })} />
        Don't remember this key (keep it in this tab's memory only)
      </label>
      <label>
        Base URL
        <input
          id={`kiln-base-url-${id}`}
          type="text"
          inputMode="url"
          placeholder={kind.defaultBaseUrl}
          aria-invalid={baseUrlError ? true : undefined}
          aria-describedby={baseUrlError ? `kiln-base-url-error-${id}` : undefined}
          value={config.baseUrl}
          onChange={(event) => onChange({ baseUrl: event.target.value })}
        />
      </label>
      {baseUrlError && (
        <p id={`kiln-base-url-error-${id}`} role="alert">
          {baseUrlError}
        </p>
      )}
      <label>
        Model
        <input list={`kiln-models-${id}`} placeholder={kind.defaultModel} value={config.model} onChange={(event) => onChange({ model: event.target.value })} />
        <datalist id={`kiln-models-${id}`}>
          {models.map((model) => (
            <option key={model} value={model} />
          ))}
        </datalist>
      </label>
      {kind.sandbox?.tools.length ? (
        <label>
          Code execution tool
          <input
            placeholder={kind.sandbox.tools[0]}
            list={`kiln-sandbox-tools-${id}`}
            value={config.sandboxTool}
            onChange={(event) => onChange({ sandboxTool: event.target.value })}
          />
          <datalist id={`kiln-sandbox-tools-${id}`}>
            {kind.sandbox.tools.map((tool) => (
              <option key={tool} value={tool} />
            ))}
          </datalist>
        </label>
      ) : null}
    </>
  );
}

/**
 * One line on what a provider has: its model, its server when that is a local one or not the
 * provider's own, and its key ("not set up" when it cannot be used yet). It never says "save":
 * the dialog's one button of that name is Save.
 */
export function providerSummary(kind: ProviderKind, config: ProviderConfig, saved: ProviderConfig, forNewChats: boolean): string {
  if (!kind.configured(config)) return "not set up";
  const parts = [config.model.trim() || kind.defaultModel];
  const baseUrl = config.baseUrl.trim();
  if (baseUrl || kind.keyOptional) parts.push(baseUrl || kind.defaultBaseUrl);
  if (!config.apiKey) parts.push("no key");
  else if (config.apiKey !== saved.apiKey || config.rememberKey !== saved.rememberKey) parts.push("key changed, not stored yet");
  else parts.push(config.rememberKey ? "key stored" : "key for this tab only");
  if (forNewChats) parts.push("new chats start here");
  return parts.join(" · ");
}
