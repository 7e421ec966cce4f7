/** The Cache Storage cache where a page keeps Python's start-up snapshot (see boot-snapshot.ts). */
export const SNAPSHOT_CACHE = "kiln-python-snapshots";

/** A snapshot larger than this is neither kept nor taken from another page (a booted interpreter is about 30 MB). */
export const MAX_SNAPSHOT_BYTES = 256 << 20;
