/**
 * What `embed.js` tells the frame it makes for a `<pre class="kiln">`: the cell's code and
 * attributes, and its session. It travels in the frame's URL fragment (`#kiln-cell=…`), which
 * is never sent to a server. A frame with no such fragment is a hand-written widget and speaks
 * protocol version 1 as always. Pure functions, no DOM: `embed.js` imports this too.
 */

export const CELL_FRAGMENT = "kiln-cell";

/** The longest code a cell, its setup or its check may have (as a `run` message's). */
export const MAX_CELL_CODE_CHARS = 1_000_000;
/** The longest hint or solution, and session token or name. */
const MAX_TEXT_CHARS = 100_000;
const MAX_NAME_CHARS = 256;

export interface CellConfig {
  /** Random per page load and session name (made by `embed.js`): a cell's way to find its session's other frames. */
  token: string;
  /** This frame holds the session's interpreter (the first cell of the session made on the page). */
  lead: boolean;
  /** What the host calls the cell in `check` messages: the `<pre>`'s id, else its number (1-based, cells only). */
  name: string | number;
  /** Its number on the page, 1-based, in the order the cells were made ("Waiting for cell N…"). */
  number: number;
  code: string;
  /** The session's setup code (for the lead only; empty when none). */
  setup: string;
  /** The check that runs after each run of this cell that ended ok (empty when none). */
  check: string;
  hint: string;
  solution: string;
  readonly: boolean;
  autorun: boolean;
  hideCode: boolean;
  /** Warm the session's interpreter once the cell comes into view. */
  preloadVisible: boolean;
  /** `light` or `dark` to override the reader's preference; absent: follow it. */
  theme?: "light" | "dark";
  /** The host's font size for the cell, in CSS pixels. */
  fontSizePx?: number;
  /** The host page's origin: the only one the frame talks to (absent when it has none, e.g. a file). */
  hostOrigin?: string;
}

/** `#kiln-cell=…` for a frame's URL. */
export function cellFragment(config: CellConfig): string {
  return `#${CELL_FRAGMENT}=${encodeURIComponent(JSON.stringify(config))}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const text = (value: unknown, max: number): string | undefined =>
  typeof value === "string" && value.length <= max ? value : undefined;

/** The cell's configuration from a frame's `location.hash`, or undefined (not a cell, or malformed: a plain widget). */
export function parseCellFragment(hash: string): CellConfig | undefined {
  const prefix = `#${CELL_FRAGMENT}=`;
  if (!hash.startsWith(prefix)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(decodeURIComponent(hash.slice(prefix.length)));
  } catch {
    return undefined;
  }
  if (!isRecord(data)) return undefined;
  const token = text(data.token, MAX_NAME_CHARS);
  const code = text(data.code, MAX_CELL_CODE_CHARS);
  const setup = text(data.setup ?? "", MAX_CELL_CODE_CHARS);
  const check = text(data.check ?? "", MAX_CELL_CODE_CHARS);
  const hint = text(data.hint ?? "", MAX_TEXT_CHARS);
  const solution = text(data.solution ?? "", MAX_CELL_CODE_CHARS);
  const { name, number } = data;
  // A token too short to be unguessable is refused: the frame is then a widget of its own.
  if (!token || token.length < 16 || code === undefined || setup === undefined || check === undefined || hint === undefined || solution === undefined) {
    return undefined;
  }
  if (!(typeof name === "number" && Number.isInteger(name)) && text(name, MAX_NAME_CHARS) === undefined) return undefined;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 1) return undefined;
  const theme = data.theme === "light" || data.theme === "dark" ? data.theme : undefined;
  const fontSizePx = typeof data.fontSizePx === "number" && data.fontSizePx >= 6 && data.fontSizePx <= 48 ? data.fontSizePx : undefined;
  const hostOrigin = text(data.hostOrigin, 2048);
  return {
    token,
    lead: data.lead === true,
    name: name as string | number,
    number,
    code,
    setup,
    check,
    hint,
    solution,
    readonly: data.readonly === true,
    autorun: data.autorun === true,
    hideCode: data.hideCode === true,
    preloadVisible: data.preloadVisible === true,
    ...(theme && { theme }),
    ...(fontSizePx !== undefined && { fontSizePx }),
    ...(hostOrigin && { hostOrigin }),
  };
}

/** A new session token: 128 random bits, as hex. */
export function newSessionToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
