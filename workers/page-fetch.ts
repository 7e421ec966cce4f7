import type { FetchReply, FetchRequest, FetchedFile, PageFetch, StartFiles, WorkerInit } from "./python-api";

/**
 * The worker's side of the fetch port: ask the page for a URL, get its bytes back. The page
 * answers only GETs under the prefixes it allows (see src/runtime/fetch-allow-list.ts).
 */
export function pageFetchOver(port: MessagePort): PageFetch {
  let next = 0;
  const waiting = new Map<number, { resolve: (file: FetchedFile) => void; reject: (error: Error) => void }>();
  port.onmessage = (event: MessageEvent<FetchReply>) => {
    const reply = event.data;
    const pending = waiting.get(reply?.id);
    if (!pending) return;
    waiting.delete(reply.id);
    if (reply.error) pending.reject(new TypeError(`Failed to fetch: ${reply.error}`));
    else pending.resolve({ ok: reply.ok, status: reply.status, contentType: reply.contentType, body: reply.body });
  };
  return (url) =>
    new Promise<FetchedFile>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      port.postMessage({ id, url } satisfies FetchRequest);
    });
}

/** Pyodide's core files, which every start needs first: the page fetches them early, the worker asks for them early. */
export function pyodideCoreFiles(indexUrl: string, lockFileUrl: string | undefined): string[] {
  return [`${indexUrl}pyodide.asm.wasm`, `${indexUrl}python_stdlib.zip`, lockFileUrl || `${indexUrl}pyodide-lock.json`];
}

/**
 * A start's first asks for Pyodide's files (`urls`), the standard library answered with the
 * frame's bytes when it sent them, and the snapshot to restore: the frame's copy when it is the
 * one the page names (its checksum is checked over the bytes all the same), else the page's.
 */
export function filesForStart(files: StartFiles | null | undefined, urls: string[], named: WorkerInit["snapshot"], pageFetch: PageFetch) {
  const stdlib = files?.stdlib;
  const early = new Map<string, Promise<FetchedFile>>(
    urls.map((url) => [url, stdlib?.url === url ? Promise.resolve({ ok: true, status: 200, contentType: "application/zip", body: stdlib.data }) : pageFetch(url)]),
  );
  return { early, snapshot: files?.snapshot && files.snapshot.checksum === named?.checksum ? files.snapshot : named };
}

/**
 * `pageFetch`, where the first request for each URL of `early` is answered by the ask already
 * made (Pyodide's core files, asked for while the worker checks its snapshot).
 */
export function askEarly(pageFetch: PageFetch, early: Map<string, Promise<FetchedFile>>): PageFetch {
  for (const file of early.values()) file.catch(() => undefined);
  return (url) => {
    const file = early.get(url);
    early.delete(url);
    return file ?? pageFetch(url);
  };
}

/**
 * `fetch` for Pyodide's files and packages goes through the page (see {@link PageFetch});
 * everything else, such as Python's own requests, goes to the network as before (where the
 * frame's policy allows it).
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
    if (init?.integrity && file.ok && !(await matchesIntegrity(await bytesOf(file.body), init.integrity))) {
      throw new TypeError(`Failed to fetch: the content of ${url} does not match its integrity (sha256) check`);
    }
    return new Response(file.body, { status: file.status, headers });
  };
}

export async function bytesOf(data: Blob | ArrayBuffer): Promise<ArrayBuffer> {
  return data instanceof Blob ? data.arrayBuffer() : data;
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
