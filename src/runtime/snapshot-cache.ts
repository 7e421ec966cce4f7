/** The Cache Storage cache where a page keeps Python's start-up snapshot (see boot-snapshot.ts). */
export const SNAPSHOT_CACHE = "kiln-python-snapshots";
