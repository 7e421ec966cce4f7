/**
 * The page's side of a Python worker's fetch port: Pyodide's files and packages, fetched by the
 * page for the worker (whose own network may be off), under an allow-list.
 */
import type { FetchReply } from "../../workers/python-api";
import { allowList, checkFetchUrl, exactFiles, lockFilePackageUrls, type AllowList, type Verdict } from "./fetch-allow-list";
import type { WorkerConfig } from "./python-worker";
import { dropped, isFetchRequest } from "./worker-guards";
import { pyodideCoreFiles } from "../../workers/page-fetch";

/**
 * Answers the worker's fetch port: only `{id, url}` with a URL the allow-list accepts, only
 * GET, never with credentials; the answer is the response's bytes. For a worker without
 * network the list is exact: Pyodide's core files and the files of the packages its lock file
 * lists, nothing else under their folders (a path of Python's choosing would carry data to
 * the host). A worker with network may reach those folders anyway, and its list is them.
 * Returns Pyodide's WebAssembly and standard library from the early fetches (null if one
 * failed), for the frame: it compiles the one, and keeps the other for the next workers.
 */
export function serveFetches(
  port: MessagePort,
  config: WorkerConfig,
  indexUrl: string,
  portable: (body: Blob) => Promise<Blob | ArrayBuffer>,
): { wasm: Promise<Blob | null>; stdlib: Promise<{ url: string; data: Blob } | null> } {
  const folders = fetchAllowList(config, indexUrl);
  const early = fetchCoreEarly(config, indexUrl);
  const core = pyodideCoreFiles(indexUrl, config.lockFileUrl);
  const [wasmUrl, stdlibUrl, lockUrl] = core;
  const check = config.network ? (url: string) => Promise.resolve(checkFetchUrl(url, folders)) : exactCheck(core, early.get(lockUrl)!, config, folders);
  const body = (url: string) =>
    early.get(url)!.then(
      (file) => (file.ok ? file.body : null),
      () => null,
    );
  const wasm = body(wasmUrl);
  const stdlib = body(stdlibUrl).then((data) => data && { url: stdlibUrl, data });
  let inFlight = 0;
  port.onmessage = async (event: MessageEvent<unknown>) => {
    const request = event.data;
    if (!isFetchRequest(request)) return dropped("fetch request", request);
    const reply = (fields: Omit<FetchReply, "id">, transfer: Transferable[] = []) =>
      port.postMessage({ id: request.id, ...fields } satisfies FetchReply, transfer);
    const refuse = (error: string) => reply({ ok: false, status: 0, contentType: "", body: new Blob([]), error });
    if (inFlight >= MAX_FETCHES_IN_FLIGHT) return refuse("refused, too many fetches at once");
    inFlight += 1;
    try {
      const verdict = await check(request.url);
      if (!verdict.ok) {
        console.warn(`Kiln refused a fetch for the Python worker: ${verdict.reason}`);
        return refuse(`refused, ${verdict.reason}`);
      }
      // Each early fetch answers one request (its bytes are handed over).
      const started = early.get(verdict.url);
      early.delete(verdict.url);
      const file = await (started ?? fetchForWorker(verdict.url));
      const body = await portable(file.body);
      reply({ ...file, body }, body instanceof ArrayBuffer ? [body] : []);
    } catch (error) {
      refuse(error instanceof Error ? error.message : String(error));
    } finally {
      inFlight -= 1;
    }
  };
  return { wasm, stdlib };
}

type Fetched = Omit<FetchReply, "id" | "body"> & { body: Blob };

async function fetchForWorker(url: string): Promise<Fetched> {
  const response = await fetch(url, { method: "GET", credentials: "omit", redirect: "error", referrerPolicy: "no-referrer" });
  const body = await response.blob();
  return { ok: response.ok, status: response.status, contentType: response.headers.get("content-type") ?? "", body };
}

/**
 * Pyodide's core files, fetched by the page as soon as a worker is made, while its frame and
 * worker start: the worker asks for these first, and finds them ready. Pyodide's own two (its
 * WebAssembly and standard library, which belong to the exact Pyodide build) are fetched once
 * per page and shared by every worker as the same Blobs; the lock file, which a mirror may
 * change, is fetched for each worker.
 */
function fetchCoreEarly(config: WorkerConfig, index: string): Map<string, Promise<Fetched>> {
  const [wasm, stdlib, lockFile] = pyodideCoreFiles(index, config.lockFileUrl);
  const early = new Map([wasm, stdlib].map((url) => [url, fetchOncePerPage(url)]));
  const lock = fetchForWorker(lockFile);
  lock.catch(() => undefined);
  return early.set(lockFile, lock);
}

const fetchedForPage = new Map<string, Promise<Fetched>>();

/** One fetch of `url` for the whole page; one that fails is tried again next time. */
function fetchOncePerPage(url: string): Promise<Fetched> {
  let file = fetchedForPage.get(url);
  if (!file) {
    file = fetchForWorker(url);
    fetchedForPage.set(url, file);
    const forget = () => fetchedForPage.delete(url);
    file.then((fetched) => fetched.ok || forget(), forget);
  }
  return file;
}

/** Fetches the page makes for one worker at a time (Pyodide loads a handful of files at once). */
const MAX_FETCHES_IN_FLIGHT = 16;

/**
 * For a worker without network: Pyodide's core files, and the files of the packages its lock
 * file lists (read from the page's own fetch of the lock file, never from the worker, once a
 * request is not for a core file), each within `folders`.
 */
function exactCheck(core: string[], lock: Promise<Fetched>, config: WorkerConfig, folders: AllowList): (url: string) => Promise<Verdict> {
  const coreFiles = exactFiles(core, folders);
  let packageFiles: Promise<AllowList> | undefined;
  const readLock = async () => {
    const file = await lock.catch(() => undefined);
    const text = file?.ok ? await file.body.text().catch(() => "") : "";
    return exactFiles(lockFilePackageUrls(text, folder(config.packageBaseUrl)), folders);
  };
  return async (url) => {
    const verdict = checkFetchUrl(url, coreFiles);
    return verdict.ok ? verdict : checkFetchUrl(url, await (packageFiles ??= readLock()));
  };
}

const folder = (url: string) => (url && !url.endsWith("/") ? `${url}/` : url);

/** Where the page fetches for a worker of `config`: Pyodide's core, the package folder, the lock file and its folder. */
function fetchAllowList(config: WorkerConfig, indexUrl: string): AllowList {
  const lockDir = config.lockFileUrl ? new URL(".", config.lockFileUrl).href : "";
  return allowList([indexUrl, folder(config.packageBaseUrl), config.lockFileUrl, lockDir]);
}

