/**
 * The state a session saves after each successful run (what a replacement worker or a reload
 * brings back), and how a run's capture is merged into it.
 */
import type { SessionSnapshot, StateCapture } from "../../workers/python-api";
import { bounded } from "../model/session-snapshot";

const nameSets = new WeakMap<string[], Set<string>>();

/** The names as a set, made once per list (a list of names is never changed once made). */
function namesOf(names: string[]): Set<string> {
  let set = nameSets.get(names);
  if (!set) nameSets.set(names, (set = new Set(names)));
  return set;
}

export const emptySnapshot = (): SessionSnapshot => ({ cells: [], names: [], values: {}, modules: {}, counter: 0 });

/**
 * `previous` with a run's capture (only what changed) merged in. Unchanged values are kept by
 * reference, never copied, and a run that changed nothing leaves the names and values as they
 * were; values of deleted, dropped or now-module names go.
 */
export function merged(previous: SessionSnapshot, capture: StateCapture): SessionSnapshot {
  const { names: listed, removed, values: changed, modules, dropped, cell, counter } = capture;
  const cells = cell ? [...previous.cells, cell] : previous.cells;
  const known = namesOf(previous.names);
  const added = [...Object.keys(changed), ...dropped, ...Object.keys(modules)].filter((name) => !known.has(name));
  let names = previous.names;
  if (listed) names = listed;
  else if (removed.length || added.length) {
    const gone = new Set(removed);
    names = [...previous.names.filter((name) => !gone.has(name)), ...new Set(added)];
  }
  const stale = [...removed, ...dropped, ...Object.keys(modules)].filter((name) => Object.hasOwn(previous.values, name));
  let values = previous.values;
  if (listed || stale.length || Object.keys(changed).length) {
    values = { ...previous.values, ...changed };
    for (const name of stale) if (!Object.hasOwn(changed, name)) delete values[name];
    if (listed) {
      const keep = namesOf(listed);
      for (const name of Object.keys(values)) if (!keep.has(name)) delete values[name];
    }
  }
  const removedUnknown = removed.filter((name) => !known.has(name)).length;
  const notKept = listed ? 0 : Math.max(0, (previous.notKept ?? 0) - removedUnknown);
  return bounded({ cells, names, values, modules, counter, ...(notKept && { notKept }) }, known);
}

/**
 * `snapshot` without `names` (their values, and the modules bound to them, are let go), and
 * with the cells in `cells` (`[filename, source]`) in place of those of the same name.
 */
export function without(snapshot: SessionSnapshot, names: string[], cells: [string, string][] = []): SessionSnapshot {
  if (cells.length) {
    const replaced = new Map(cells);
    snapshot = { ...snapshot, cells: snapshot.cells.map(([name, source]) => [name, replaced.get(name) ?? source]) };
  }
  if (!names.length) return snapshot;
  const gone = new Set(names);
  const keep = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).filter(([name]) => !gone.has(name)));
  return { ...snapshot, names: snapshot.names.filter((name) => !gone.has(name)), values: keep(snapshot.values), modules: keep(snapshot.modules) };
}
