import { useRegisterSW } from "virtual:pwa-register/react";
import { capabilities } from "../../runtime/capabilities";

/**
 * Registers the service worker. When a new version of Kiln has been downloaded, it waits
 * (no tab ever runs a mix of versions) and this asks the person to reload into it.
 */
export function UpdatePrompt() {
  const {
    needRefresh: [needRefresh, setNeedRefresh],
    updateServiceWorker,
  } = useRegisterSW({
    immediate: true,
    onRegisterError: (error: unknown) => console.warn("Kiln will not work offline here: the service worker did not register.", error),
  });
  if (!capabilities.serviceWorkers) {
    return (
      <p className="update-prompt quiet" role="note">
        This browser cannot keep Kiln for offline use (no service workers here): it needs the network to start.
      </p>
    );
  }
  if (!needRefresh) return null;
  return (
    <div className="update-prompt" role="alert">
      A new version of Kiln is ready.
      <button type="button" onClick={() => void updateServiceWorker(true)}>
        Reload to update
      </button>
      <button type="button" className="link-button" onClick={() => setNeedRefresh(false)}>
        Later
      </button>
    </div>
  );
}
