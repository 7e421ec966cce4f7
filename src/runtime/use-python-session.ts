import { useEffect, useSyncExternalStore } from "react";
import { PythonSession, type SessionState } from "./python-session";
import type { SessionConfig } from "./session-config";
import { forgetSessionFiles } from "./session-files";
import { whenErased } from "../storage/erased";

const NOT_STARTED: SessionState = { kind: "loading", message: "Starting Python…" };

/**
 * Sessions live as long as the page, keyed by what they belong to ("playground", a
 * conversation's id): leaving a view and coming back finds the same interpreter.
 */
const sessions = new Map<string, PythonSession>();

export function getSession(key: string, config: SessionConfig): PythonSession {
  let session = sessions.get(key);
  if (!session) {
    session = new PythonSession(config);
    sessions.set(key, session);
  }
  return session;
}

// Everything Kiln keeps was deleted: every interpreter of the page stops.
whenErased(() => {
  for (const key of [...sessions.keys()]) disposeSession(key);
});

export function disposeSession(key: string): void {
  sessions.get(key)?.dispose();
  sessions.delete(key);
  forgetSessionFiles(key);
}

/** The session for `key`, started once `config` is known; its state follows along. */
export function usePythonSession(
  key: string,
  config: SessionConfig | null,
): { session: PythonSession | null; state: SessionState } {
  const session = config ? getSession(key, config) : null;
  useEffect(() => {
    if (session && config) session.configure(config);
  }, [session, config]);
  const state = useSyncExternalStore(
    (listener) => session?.subscribe(listener) ?? (() => undefined),
    () => session?.currentState ?? NOT_STARTED,
  );
  return { session, state };
}
