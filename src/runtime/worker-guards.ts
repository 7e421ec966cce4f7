/**
 * Type guards for everything the page receives from a Python worker (or its host frame).
 * The worker runs hostile code: what it sends is untrusted data, checked against the
 * contract in workers/python-api.ts before the page acts on it.
 */
import type {
  FetchRequest,
  FileBytes,
  FileInfo,
  HostReport,
  HostAsk,
  HostFiles,
  HostHere,
  HostLaunch,
  HostPrepare,
  HostPrepared,
  HostStart,
  ImportReport,
  MimeBundle,
  PostedEvent,
  PythonError,
  RestoreReport,
  RunResult,
  RuntimeInfo,
  SentCuts,
  StateCapture,
  StreamRun,
  WorkerRunOutcome,
} from "../../workers/python-api";
import { MAX_RUNS_PER_FLUSH } from "../../workers/output-batcher";
import { DISPLAY_ID_CHARS } from "../../workers/output-limits";

type Guard<T> = (value: unknown) => value is T;

/** What a worker may ever report a run ended with (the page adds timeout, crashed). */
const WORKER_RUN_STATUSES = new Set(["ok", "error", "interrupted", "unavailable"]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
const isString = (value: unknown): value is string => typeof value === "string";
export const isBoolean = (value: unknown): value is boolean => typeof value === "boolean";
const isFiniteNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const arrayOf =
  <T>(item: Guard<T>): Guard<T[]> =>
  (value): value is T[] =>
    Array.isArray(value) && value.every(item);
const recordOf =
  <T>(item: Guard<T>): Guard<Record<string, T>> =>
  (value): value is Record<string, T> =>
    isObject(value) && Object.values(value).every(item);
const isStringArray = arrayOf(isString);
export const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array;
const isBlob = (value: unknown): value is Blob => value instanceof Blob;
const isChecksum = (value: unknown): value is string => typeof value === "string" && /^[0-9a-f]{16}$/.test(value);
/** Present keys only, checked by their guard; `optional` keys may be missing (not `undefined`-valued). */
type Check = (value: unknown) => boolean;
function hasShape(value: unknown, required: Record<string, Check>, optional: Record<string, Check> = {}): boolean {
  if (!isObject(value)) return false;
  for (const [key, guard] of Object.entries(required)) if (!guard(value[key])) return false;
  for (const [key, guard] of Object.entries(optional)) if (key in value && !guard(value[key])) return false;
  return Object.keys(value).every((key) => key in required || key in optional);
}

export const isMimeBundle: Guard<MimeBundle> = recordOf(isString);

/** What the worker says it cut from a bundle (the page caps the bundle again anyway). */
const isSentCuts: Guard<SentCuts> = recordOf((cut): cut is SentCuts[string] =>
  hasShape(cut, { chars: isCount }, { file: (file) => isBlob(file) || isBytes(file), base64: (flag) => flag === true }),
);

export const isPythonError = (value: unknown): value is PythonError =>
  hasShape(value, { ename: isString, evalue: isString, traceback: isString });

const isCell = (value: unknown): value is [string, string] => Array.isArray(value) && value.length === 2 && value.every(isString);

export const isRestoreReport = (value: unknown): value is RestoreReport =>
  hasShape(value, { kept: isStringArray, lost: isStringArray }, { cells: arrayOf(isCell) });

export const isRunResult = (value: unknown): value is RunResult =>
  hasShape(
    value,
    { status: (status) => isString(status) && WORKER_RUN_STATUSES.has(status), durationMs: isFiniteNumber },
    {
      value: isMimeBundle,
      valueCut: isSentCuts,
      error: isPythonError,
      exitCode: Number.isSafeInteger,
      missingModules: isStringArray,
      loadedPackages: isStringArray,
      truncatedBytes: isCount,
    },
  );

export const isStateCapture = (value: unknown): value is StateCapture =>
  hasShape(
    value,
    {
      removed: isStringArray,
      values: recordOf(isBytes),
      modules: recordOf(isString),
      dropped: isStringArray,
      tooLarge: isStringArray,
      counter: isCount,
    },
    { names: isStringArray, cell: isCell },
  );

export const isWorkerRunOutcome = (value: unknown): value is WorkerRunOutcome =>
  hasShape(value, { result: isRunResult }, { capture: isStateCapture });

const isBootKind = (value: unknown): boolean => value === "snapshot" || value === "fresh" || value === "fallback";

export const isRuntimeInfo = (value: unknown): value is RuntimeInfo =>
  hasShape(
    value,
    { pythonVersion: isString, pyodideVersion: isString, lockImports: isStringArray, boot: isBootKind },
    { bootNote: isString, snapshot: (value) => hasShape(value, { data: (data) => isBlob(data) || isBytes(data), checksum: isChecksum }) },
  );

export const isImportReport = (value: unknown): value is ImportReport =>
  hasShape(value, { imports: isStringArray, available: isStringArray });

export const isFileInfo = (value: unknown): value is FileInfo =>
  hasShape(value, { path: isString, size: isCount, mtimeMs: isFiniteNumber });
export const isFileList: Guard<FileInfo[]> = arrayOf(isFileInfo);
export const isFileBytesList: Guard<FileBytes[]> = arrayOf((value): value is FileBytes => hasShape(value, { path: isString, data: isBytes }));

const isStreamRun = (value: unknown): value is StreamRun =>
  Array.isArray(value) && value.length === 2 && (value[0] === "stdout" || value[0] === "stderr") && isString(value[1]);

/** Runs of one `streams` event: their count is checked before any is read, so a list of millions costs nothing. */
const isStreamRuns = (value: unknown): value is StreamRun[] =>
  Array.isArray(value) && value.length <= MAX_RUNS_PER_FLUSH && value.every(isStreamRun);

/**
 * A `streams` event with more runs than the worker ever sends in one: only Python that took
 * the worker over sends it (an array of millions of references to one run costs it nothing).
 * Checked without reading the runs.
 */
export function isOversizedStreams(value: unknown): boolean {
  return isObject(value) && value.type === "streams" && Array.isArray(value.runs) && value.runs.length > MAX_RUNS_PER_FLUSH;
}

const isDisplayId = (value: unknown): value is string => isString(value) && value.length <= DISPLAY_ID_CHARS;

/** The events of a run; anything else is dropped. */
export function isPostedEvent(value: unknown): value is PostedEvent {
  if (!isObject(value)) return false;
  switch (value.type) {
    case "streams":
      return hasShape(value, { type: isString, runs: isStreamRuns });
    case "display":
      return hasShape(value, { type: isString, data: isMimeBundle }, { cut: isSentCuts, displayId: isDisplayId });
    case "update-display":
      return hasShape(value, { type: isString, displayId: isDisplayId, data: isMimeBundle }, { cut: isSentCuts });
    case "clear-output":
      return hasShape(value, { type: isString });
    case "progress":
    case "fatal":
      return hasShape(value, { type: isString, message: isString });
    case "input-request":
      return hasShape(value, { type: isString, prompt: isString });
    case "truncated":
      return hasShape(value, { type: isString, limitBytes: isCount });
    case "done":
      return hasShape(value, { type: isString });
    default:
      return false;
  }
}

export const isFetchRequest = (value: unknown): value is FetchRequest =>
  hasShape(value, { id: isCount, url: isString });

export function isHostReport(value: unknown): value is HostReport {
  if (!isObject(value)) return false;
  switch (value.type) {
    case "started":
      return hasShape(value, { type: isString, sharedMemory: isBoolean });
    case "answer":
      return hasShape(value, { type: isString, id: isCount, value: isBoolean });
    case "worker-error":
      return hasShape(value, { type: isString, message: isString });
    default:
      return false;
  }
}

/** The host frame's side: the one message that starts the frame. */
export function isHostStart(value: unknown): value is HostStart {
  return hasShape(value, { kilnHost: (tag) => tag === 1, hostSource: isString, source: isString, network: isBoolean, launcher: isPort });
}

/** The host frame's side: a request to start one more worker. */
export function isHostLaunch(value: unknown): value is HostLaunch {
  return hasShape(value, { kilnLaunch: (tag) => tag === 1, control: isPort, kilnPort: isPort, events: isPort, fetch: isPort });
}

export function isHostPrepare(value: unknown): value is HostPrepare {
  return hasShape(value, { kilnPrepare: (tag) => tag === 1 });
}

export function isHostPrepared(value: unknown): value is HostPrepared {
  return hasShape(value, { kilnPrepared: (tag) => tag === 1 });
}

/** The host frame's side: the page asks whether the frame is still there. */
export function isHostAsk(value: unknown): value is HostAsk {
  return hasShape(value, { kilnAsk: (tag) => tag === 1 });
}

export function isHostHere(value: unknown): value is HostHere {
  return hasShape(value, { kilnHere: (tag) => tag === 1 });
}

/** The host frame's side: the files every start reads, to keep for the next workers. */
export function isHostFiles(value: unknown): value is HostFiles {
  return hasShape(value, {
    kilnFiles: (tag) => tag === 1,
    stdlib: (stdlib) => stdlib === null || hasShape(stdlib, { url: isString, data: isBlob }),
    snapshot: (snapshot) => snapshot === null || hasShape(snapshot, { data: isBlob, checksum: isChecksum }),
  });
}

const isPort = (port: unknown) => port instanceof MessagePort;

/** Logs what a worker sent that breaks the contract; the page never acts on it. */
export function dropped(what: string, value: unknown): void {
  console.warn(`Kiln ignored a malformed ${what} from the Python worker.`, value);
}
