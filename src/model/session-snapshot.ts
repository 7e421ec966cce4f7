/** The limit on what a session's saved state (see `src/runtime/session-state.ts`) holds. */
import type { SessionSnapshot } from "../../workers/python-api";

/**
 * The most variables a scope's saved state holds (a conversation's, kept in IndexedDB, and any
 * session's, brought back into a replacement worker): every start reads and restores them all.
 * Past it the rest are not kept, and counted in `notKept`.
 */
export const MAX_SAVED_VARIABLES = 5_000;

/**
 * `snapshot` with at most {@link MAX_SAVED_VARIABLES} names: those in `first` (kept before) come
 * first, then the others in their order. The names past it lose their values and modules, and
 * are counted in `notKept`.
 */
export function bounded(snapshot: SessionSnapshot, first: ReadonlySet<string> = new Set()): SessionSnapshot {
  if (snapshot.names.length <= MAX_SAVED_VARIABLES) return snapshot;
  const ordered = [...snapshot.names.filter((name) => first.has(name)), ...snapshot.names.filter((name) => !first.has(name))];
  const keep = new Set(ordered.slice(0, MAX_SAVED_VARIABLES));
  const kept = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).filter(([name]) => keep.has(name)));
  return {
    ...snapshot,
    names: snapshot.names.filter((name) => keep.has(name)),
    values: kept(snapshot.values),
    modules: kept(snapshot.modules),
    notKept: (snapshot.notKept ?? 0) + snapshot.names.length - keep.size,
  };
}
