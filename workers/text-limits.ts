import type { PythonError } from "./python-api";

/**
 * How much of an error and of an `input()` prompt is kept, shown and saved. Python chooses both
 * (`raise ValueError("x" * 10**7)`, `input("p" * 10**7)`), so the worker cuts them where they are
 * made, the page again where it receives them, and again where it reads saved output back (see
 * docs/output-limits.md).
 */
export const ERROR_NAME_CHARS = 200;
export const ERROR_VALUE_CHARS = 10_000;
/** A traceback keeps its start (the frames and the exception's first line) and its end (the frame that failed). */
export const TRACEBACK_CHARS = 20_000;
export const PROMPT_CHARS = 2_000;
/** A line of Kiln's own about a run (which may quote an error's text). */
export const NOTICE_CHARS = 12_000;

const count = (n: number) => n.toLocaleString("en-US");
/** Room for the words that say what was cut: a text cut once is not cut again where it is received or read back. */
const SAYS_CUT = 64;

/** `text` cut to its first `max` characters, saying how many more there were. */
export function keepStart(text: string, max: number): string {
  if (text.length <= max + SAYS_CUT) return text;
  return `${text.slice(0, max)}… [${count(text.length - max)} more characters not kept]`;
}

/** `text` cut to its first and last `max / 2` characters, saying how many were between. */
export function keepEnds(text: string, max: number): string {
  if (text.length <= max + SAYS_CUT) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}… [${count(text.length - 2 * half)} characters not kept] …${text.slice(text.length - half)}`;
}

/** An error within the limits. */
export function capError(error: PythonError): PythonError {
  return {
    ename: keepStart(error.ename, ERROR_NAME_CHARS),
    evalue: keepStart(error.evalue, ERROR_VALUE_CHARS),
    traceback: keepEnds(error.traceback, TRACEBACK_CHARS),
  };
}

/** An `input()` prompt within the limit. */
export const capPrompt = (prompt: string): string => keepStart(prompt, PROMPT_CHARS);
