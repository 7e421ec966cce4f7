/**
 * What this browser can do that Kiln relies on, found out once. Every path that depends on
 * one of these reads it here (search for the names), so the fallbacks are easy to find.
 * (`Document-Isolation-Policy`, Chromium's, has no script-side test: where a browser lacks
 * it, a widget in a host page that is not isolated simply finds no `sharedMemory`.)
 */
import { sharedMemoryAvailable } from "../../workers/shared-buffers";

export interface Capabilities {
  /**
   * SharedArrayBuffer on a cross-origin isolated page: Stop interrupts Python (else the
   * worker is replaced and the state restored), `input()` can wait for an answer, and
   * `time.sleep` wakes on Stop. WebKitGTK has none even when isolated. Each Python host
   * frame checks this again for itself (a frame in a page that is not isolated may lack it).
   */
  sharedMemory: boolean;
  /** A service worker can be registered: Kiln works offline after the first visit. */
  serviceWorkers: boolean;
}

function detect(): Capabilities {
  return {
    sharedMemory: sharedMemoryAvailable(),
    serviceWorkers: typeof navigator !== "undefined" && "serviceWorker" in navigator && globalThis.isSecureContext === true,
  };
}

export const capabilities: Capabilities = detect();
