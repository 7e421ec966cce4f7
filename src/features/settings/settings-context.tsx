import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { DEFAULT_SETTINGS, loadSettings, saveSettings, type Settings } from "../../storage/settings";

interface SettingsContextValue {
  settings: Settings;
  /** False until the stored settings have been read. */
  loaded: boolean;
  save: (settings: Settings) => Promise<void>;
}

const SettingsContext = createContext<SettingsContextValue | null>(null);

/** Settings saved in one tab are read again in the others: a save from a tab with older settings would undo them. */
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("kiln-settings") : undefined;

export function SettingsProvider({ children }: { children: ReactNode }) {
  const [settings, setSettings] = useState<Settings>(DEFAULT_SETTINGS);
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    loadSettings()
      .then(setSettings)
      .catch((error: unknown) => console.error("Could not read settings; using defaults.", error))
      .finally(() => setLoaded(true));
    const reread = () => void loadSettings().then(setSettings, (error: unknown) => console.error("Could not read settings.", error));
    channel?.addEventListener("message", reread);
    return () => channel?.removeEventListener("message", reread);
  }, []);
  const save = useCallback(async (next: Settings) => {
    await saveSettings(next);
    setSettings(next);
    channel?.postMessage("saved");
  }, []);
  return <SettingsContext.Provider value={{ settings, loaded, save }}>{children}</SettingsContext.Provider>;
}

export function useSettings(): SettingsContextValue {
  const value = useContext(SettingsContext);
  if (!value) throw new Error("useSettings must be used inside <SettingsProvider>.");
  return value;
}
