import { useEffect, useState, useSyncExternalStore } from "react";
import { ChatPage } from "./features/chat/ChatPage";
import { Playground } from "./features/playground/Playground";
import { SettingsDialog } from "./features/settings/SettingsDialog";
import { SettingsProvider } from "./features/settings/settings-context";
import { UpdatePrompt } from "./features/offline/UpdatePrompt";
import { useOnline } from "./features/offline/use-online";
import { routeFromHash, type Route } from "./route";
import { currentErasure, onErasure } from "./storage/erased";
import { DeletedNotice } from "./features/settings/DeletedNotice";
// Listens for a delete begun in another tab from the start.
import "./features/settings/delete-everything";

export function App() {
  const [route, setRoute] = useState<Route>(routeFromHash);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const online = useOnline();
  const erasure = useSyncExternalStore(onErasure, currentErasure);
  useEffect(() => {
    const onHash = () => setRoute(routeFromHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  // Everything was deleted: nothing else is shown, so that nothing is saved again before a reload.
  if (erasure) return <DeletedNotice erasure={erasure} />;
  return (
    <SettingsProvider>
      <header className="app-header">
        <span className="logo">Kiln</span>
        <nav aria-label="Main">
          <a href="#/chat" aria-current={route === "chat" ? "page" : undefined}>
            Chat
          </a>
          <a href="#/playground" aria-current={route === "playground" ? "page" : undefined}>
            Playground
          </a>
        </nav>
        {!online && (
          <span className="offline-badge" title="Python, your files and your conversations still work; Claude needs a network.">
            Offline
          </span>
        )}
        <button type="button" className="settings-button" onClick={() => setSettingsOpen(true)}>
          Settings
        </button>
      </header>
      <UpdatePrompt />
      {route === "chat" ? <ChatPage onOpenSettings={() => setSettingsOpen(true)} /> : <Playground />}
      <SettingsDialog open={settingsOpen} onClose={() => setSettingsOpen(false)} />
    </SettingsProvider>
  );
}
