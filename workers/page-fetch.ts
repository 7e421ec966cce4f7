import type { PageFetch } from "./python-api";

/**
 * `fetch` for Pyodide's files and packages goes through the page (see {@link PageFetch});
 * everything else, such as Python's own requests, goes to the network as before.
 */
export function routeFetchesThroughPage(pageFetch: PageFetch, prefixes: string[]): void {
  const allowed = prefixes.filter(Boolean);
  const network = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url, allowed[0]).href;
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    if (method !== "GET" || !allowed.some((prefix) => url.startsWith(prefix))) return network(input, init);
    const file = await pageFetch(url);
    const headers = { "content-type": file.contentType };
    // Pyodide checks each package against the lock file's sha256 through `integrity`.
    if (init?.integrity && file.ok) {
      const bytes = await new Response(file.body).arrayBuffer();
      if (!(await matchesIntegrity(bytes, init.integrity))) {
        throw new TypeError(`Failed to fetch: the content of ${url} does not match its integrity (sha256) check`);
      }
      return new Response(bytes, { status: file.status, headers });
    }
    return new Response(file.body, { status: file.status, headers });
  };
}

/** Whether `body` matches a Subresource Integrity value such as `sha256-<base64>`. */
async function matchesIntegrity(body: ArrayBuffer, integrity: string): Promise<boolean> {
  const algorithms: Record<string, string> = { sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" };
  for (const item of integrity.trim().split(/\s+/)) {
    const [name, expected] = [item.slice(0, item.indexOf("-")), item.slice(item.indexOf("-") + 1)];
    if (!algorithms[name]) continue;
    const digest = new Uint8Array(await crypto.subtle.digest(algorithms[name], body));
    if (btoa(String.fromCharCode(...digest)) === expected) return true;
  }
  return false;
}

/** A module fetched by the page, importable here (from a `blob:` URL). */
export async function moduleFromPage(pageFetch: PageFetch, url: string): Promise<string> {
  const file = await pageFetch(url);
  if (!file.ok) throw new Error(`Could not load ${url} (${file.status})`);
  const source = await new Response(file.body).blob();
  return URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
}
