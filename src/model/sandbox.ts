/**
 * A scope's sandbox on a provider's side (`chat:<id>` or `playground`), kept in IndexedDB.
 * `provider` says whose it is; the rest is that provider's own record (container, uploads).
 */
export interface StoredSandbox {
  provider: string;
  [field: string]: unknown;
}
