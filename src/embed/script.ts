/**
 * `embed.js`: one script tag turns every `<pre class="kiln">` of a page into a Kiln widget in
 * its place (an iframe of `embed.html`), now and whenever such a `<pre>` is added later. It
 * loads nothing else into the host page (no React, no editor, no Python) and gives the host
 * nothing beyond protocol version 1: each frame speaks it to the page as a hand-written one does.
 *
 * The cells of one session (`data-kiln-session`, default: the whole page) share one
 * interpreter, held by the session's first cell; the token that ties them together is drawn
 * here at random for each page load and session (see siblings.ts for who may use it).
 */
import { cellFragment, newSessionToken, type CellConfig } from "./cell-config";

const KILN = new URL("embed.html", import.meta.url);
const KILN_ORIGIN = KILN.origin;

/** Each session's token, by its name ("" for the page's default session). */
const tokens = new Map<string, string>();
/** Each session's setup code, until its first cell is made. */
const setups = new Map<string, string[]>();
/** The `<pre>`s already handled (made a cell, or taken as a setup or check). */
const handled = new WeakSet<Element>();
/** The frames made, by their window: only their own messages size them. */
const frames = new Map<Window, { frame: HTMLIFrameElement; pre: HTMLElement; shown: boolean }>();
let cells = 0;

const codeOf = (pre: HTMLElement) => (pre.textContent ?? "").replace(/\s+$/, "");
const sessionOf = (pre: HTMLElement) => (pre.getAttribute("data-kiln-session") ?? "").trim();
const has = (pre: HTMLElement, name: string) => pre.hasAttribute(`data-kiln-${name}`);
const isCell = (pre: HTMLElement) => !has(pre, "setup") && !has(pre, "check");

/** Low specificity (`:where`), so that the page's own styles win. */
const STYLE = `:where(iframe.kiln-cell){display:block;width:calc(100% - 2px);border:1px solid rgb(127 127 127 / .35);border-radius:6px;margin:1em 0}`;

function turnCellsIntoWidgets(): void {
  const pres = [...document.querySelectorAll<HTMLElement>("pre.kiln")];
  const checks = new Map<HTMLElement, string>();
  let lastCell: HTMLElement | undefined;
  for (const pre of pres) {
    if (isCell(pre)) {
      lastCell = pre;
      continue;
    }
    if (handled.has(pre)) continue;
    handled.add(pre);
    pre.style.display = "none";
    const session = sessionOf(pre);
    if (has(pre, "setup")) {
      if (tokens.has(session)) console.warn("Kiln: a setup added after its session's first cell is ignored.", pre);
      else setups.set(session, [...(setups.get(session) ?? []), codeOf(pre)]);
    } else if (lastCell && !handled.has(lastCell)) {
      // Several checks of one cell run as one, in order.
      checks.set(lastCell, [checks.get(lastCell), codeOf(pre)].filter(Boolean).join("\n"));
    } else {
      console.warn("Kiln: a check belongs to the cell just before it, and there is none to add it to.", pre);
    }
  }
  // The host's styles are read for all new cells before any frame goes in (one style pass, not one per cell).
  for (const pre of pres) {
    if (handled.has(pre) || !isCell(pre)) continue;
    handled.add(pre);
    waiting.push({ pre, check: checks.get(pre) ?? "", fontSizePx: parseFloat(getComputedStyle(pre.parentElement ?? pre).fontSize) });
  }
  makeNextSoon();
}

/** Cells found but not made yet, in page order. */
const waiting: { pre: HTMLElement; check: string; fontSizePx: number }[] = [];
/**
 * Frames are made one per task of the host page, and at most this many load at once: a frame
 * costs the host little of its own, but twenty loading side by side take the machine's cores
 * from the host page, whose every task then lasts longer.
 */
const MAX_LOADING = 2;
/** A frame that has not loaded after this long no longer holds the next one back. */
const LOAD_WAIT_MS = 5000;
let loading = 0;
let scheduled = false;

function makeNextSoon(): void {
  if (scheduled || loading >= MAX_LOADING || !waiting.length) return;
  scheduled = true;
  setTimeout(makeNext, 0);
}

function makeNext(): void {
  scheduled = false;
  let next = waiting.shift();
  while (next && !next.pre.isConnected) next = waiting.shift();
  if (next) {
    const frame = makeCell(next.pre, next.check, next.fontSizePx);
    loading += 1;
    let done = false;
    const loaded = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      frame.removeEventListener("load", loaded);
      loading -= 1;
      makeNextSoon();
    };
    const timer = setTimeout(loaded, LOAD_WAIT_MS);
    frame.addEventListener("load", loaded);
  }
  makeNextSoon();
}

function makeCell(pre: HTMLElement, check: string, fontSizePx: number): HTMLIFrameElement {
  const session = sessionOf(pre);
  const lead = !tokens.has(session);
  if (lead) tokens.set(session, newSessionToken());
  const number = ++cells;
  const theme = pre.closest("[data-kiln-theme]")?.getAttribute("data-kiln-theme");
  const config: CellConfig = {
    token: tokens.get(session)!,
    lead,
    name: pre.id || number,
    number,
    code: codeOf(pre),
    setup: lead ? (setups.get(session) ?? []).join("\n\n") : "",
    check,
    hint: pre.getAttribute("data-kiln-hint") ?? "",
    solution: pre.getAttribute("data-kiln-solution") ?? "",
    readonly: has(pre, "readonly"),
    autorun: has(pre, "autorun"),
    hideCode: has(pre, "hide-code"),
    preloadVisible: pre.getAttribute("data-kiln-preload") === "visible",
    ...((theme === "light" || theme === "dark") && { theme }),
    ...(Number.isFinite(fontSizePx) && { fontSizePx }),
    ...(location.origin !== "null" && { hostOrigin: location.origin }),
  };
  setups.delete(session);
  const frame = document.createElement("iframe");
  frame.className = "kiln-cell";
  frame.title = `Python cell ${number}`;
  frame.allow = "cross-origin-isolated";
  // Out of sight and taking no room until it has laid itself out: the <pre> stays until then.
  Object.assign(frame.style, { height: "0", visibility: "hidden" });
  frame.src = KILN.href + cellFragment(config);
  pre.after(frame);
  if (frame.contentWindow) frames.set(frame.contentWindow, { frame, pre, shown: false });
  return frame;
}

/** A frame's height, from its own `resize` messages only; its first one shows it in place of its `<pre>`. */
function onMessage(event: MessageEvent): void {
  if (event.origin !== KILN_ORIGIN || !event.source) return;
  const made = frames.get(event.source as Window);
  const data: unknown = event.data;
  if (!made || typeof data !== "object" || data === null) return;
  const { kiln, type, height } = data as { kiln?: unknown; type?: unknown; height?: unknown };
  if (kiln !== 1 || type !== "resize" || typeof height !== "number" || !Number.isFinite(height) || height <= 0) return;
  made.frame.style.height = `${Math.min(Math.ceil(height), 100_000)}px`;
  if (made.shown) return;
  made.shown = true;
  made.frame.style.visibility = "";
  made.pre.style.display = "none";
}

const style = document.createElement("style");
style.textContent = STYLE;
document.head.append(style);
addEventListener("message", onMessage);
turnCellsIntoWidgets();
new MutationObserver(turnCellsIntoWidgets).observe(document.documentElement, { childList: true, subtree: true });
