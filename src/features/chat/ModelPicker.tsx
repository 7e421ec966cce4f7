import { useState } from "react";
import type { ModelRef } from "../../model/conversation";
import { configuredProviders, createProvider, effectiveConfig, modelLabel } from "../../providers";
import type { Settings } from "../../storage/settings";

/** Models each provider listed, by provider and Base URL: asked once per page. */
const listed = new Map<string, Promise<string[]>>();

const valueOf = (ref: ModelRef) => JSON.stringify([ref.provider, ref.model]);

/**
 * One picker across the providers set up in Settings: "<provider> · <model>". The lists are
 * asked for only when the picker is used, so opening a conversation sends nothing.
 */
export function ModelPicker({
  settings,
  value,
  disabled,
  onChange,
}: {
  settings: Settings;
  value?: ModelRef;
  disabled?: boolean;
  onChange: (ref: ModelRef) => void;
}) {
  const [models, setModels] = useState<Record<string, string[]>>({});
  const kinds = configuredProviders(settings);
  const fetchLists = () => {
    for (const kind of kinds) {
      const key = `${kind.id} ${effectiveConfig(settings, kind).baseUrl}`;
      if (!listed.has(key)) {
        const list = createProvider(settings, kind.id, "models")?.listModels() ?? Promise.resolve([]);
        listed.set(key, list.catch(() => []));
      }
      void listed.get(key)!.then((ids) => setModels((all) => (all[kind.id] === ids ? all : { ...all, [kind.id]: ids })));
    }
  };
  const options: ModelRef[] = [];
  for (const kind of kinds) {
    const names = new Set([effectiveConfig(settings, kind).model, ...(value?.provider === kind.id ? [value.model] : []), ...(models[kind.id] ?? [])]);
    for (const model of names) options.push({ provider: kind.id, model });
  }
  if (!options.length) return null;
  return (
    <select
      aria-label="Model for this conversation"
      className="model-picker"
      disabled={disabled}
      value={value ? valueOf(value) : undefined}
      onFocus={fetchLists}
      onPointerDown={fetchLists}
      onChange={(event) => {
        const [provider, model] = JSON.parse(event.target.value) as [string, string];
        onChange({ provider, model });
      }}
    >
      {options.map((ref) => (
        <option key={valueOf(ref)} value={valueOf(ref)}>
          {modelLabel(ref)}
        </option>
      ))}
    </select>
  );
}
