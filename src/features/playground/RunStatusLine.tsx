import { useEffect, useState } from "react";
import { formatDuration } from "../../runtime/output-model";
import type { SessionState } from "../../runtime/python-session";

/** Loading progress, then "Python ready" with versions; elapsed time while a run goes on. */
export function RunStatusLine({ state, running, startedAt }: { state: SessionState; running: boolean; startedAt: number }) {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(timer);
  }, [running]);

  let text: string;
  switch (state.kind) {
    case "loading":
      text = state.message;
      break;
    case "error":
      text = state.message;
      break;
    case "ready":
    case "running":
      text = running
        ? `${state.kind === "running" && state.message ? state.message : "Running…"} ${formatDuration(Math.max(0, now - startedAt))}`
        : `Python ready · Python ${state.info.pythonVersion} · Pyodide ${state.info.pyodideVersion}`;
      break;
  }
  return (
    <span role="status" className={`status status-${state.kind}`} data-boot={state.kind === "ready" || state.kind === "running" ? state.info.boot : undefined}>
      {text}
    </span>
  );
}
