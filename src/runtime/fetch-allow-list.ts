/**
 * Which URLs the page fetches for a Python worker: GETs of Pyodide's core, the lock file and
 * the packages, nothing else. The worker (hostile code) names the URL; the page parses it
 * and checks it against what it configured itself.
 */

/** An allowed place: a whole folder (`prefix` ending with `/`) or one file. */
export interface AllowedPlace {
  origin: string;
  /** A path ending with `/` allows everything below it; any other path allows that file only. */
  path: string;
}

export type AllowList = AllowedPlace[];

/** The allow-list for absolute URLs the page configured (folders end with `/`, others are files). Bad or empty ones are left out. */
export function allowList(urls: string[]): AllowList {
  const places: AllowList = [];
  for (const raw of urls) {
    if (!raw) continue;
    const url = parseFetchUrl(raw);
    if (url) places.push({ origin: url.origin, path: url.pathname });
  }
  return places;
}

/** `url` parsed, when it is a plain http(s) URL: no credentials, query, fragment or encoded dots and slashes. */
function parseFetchUrl(raw: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  if (url.username || url.password || url.search || url.hash || raw.includes("#") || raw.includes("?")) return undefined;
  // `new URL` has resolved `..` and `%2e%2e`; what is left encoded (a dot, a slash, a
  // backslash, a percent) could be decoded again by a server into a way out of the folder.
  if (/%(2e|2f|5c|25)/i.test(url.pathname) || /\/\.\.?(\/|$)/.test(url.pathname)) return undefined;
  return url;
}

/** The URL to fetch, or why not. */
export type Verdict = { ok: true; url: string } | { ok: false; reason: string };

/** The URL to fetch when `raw` is allowed, else why not. */
export function checkFetchUrl(raw: string, allowed: AllowList): Verdict {
  const url = parseFetchUrl(raw);
  if (!url) return { ok: false, reason: `not a plain http(s) URL: ${JSON.stringify(raw.slice(0, 200))}` };
  const place = allowed.find(
    (place) =>
      place.origin === url.origin && (place.path.endsWith("/") ? url.pathname.startsWith(place.path) : url.pathname === place.path),
  );
  if (!place) return { ok: false, reason: `not a Pyodide or package URL: ${url.href.slice(0, 200)}` };
  return { ok: true, url: url.href };
}

/**
 * The exact URLs of the packages a lock file lists: each entry's `file_name` resolved against
 * `base` (the package folder), as Pyodide resolves it. Entries that are not plain file URLs
 * (a folder, a query, a fragment, not http(s)) are left out. Text that is not a lock file
 * gives none.
 */
export function lockFilePackageUrls(lockText: string, base: string): string[] {
  let lock: unknown;
  try {
    lock = JSON.parse(lockText);
  } catch {
    return [];
  }
  const packages = (lock as { packages?: unknown } | null)?.packages;
  if (!packages || typeof packages !== "object") return [];
  const urls: string[] = [];
  for (const entry of Object.values(packages)) {
    const fileName = (entry as { file_name?: unknown } | null)?.file_name;
    if (typeof fileName !== "string" || !fileName || fileName.endsWith("/")) continue;
    let url: URL;
    try {
      url = new URL(fileName, base);
    } catch {
      continue;
    }
    if (!url.pathname.endsWith("/") && parseFetchUrl(url.href)) urls.push(url.href);
  }
  return urls;
}

/** Of `urls`, those `within` allows, each as a place of its own: that file only. */
export function exactFiles(urls: string[], within: AllowList): AllowList {
  const places: AllowList = [];
  for (const raw of urls) {
    const verdict = checkFetchUrl(raw, within);
    if (!verdict.ok) continue;
    const url = new URL(verdict.url);
    if (!url.pathname.endsWith("/")) places.push({ origin: url.origin, path: url.pathname });
  }
  return places;
}
