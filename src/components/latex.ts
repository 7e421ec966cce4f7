/**
 * `text/latex` from Python rendered by KaTeX: the formulas between `$…$`, `$$…$$`, `\(…\)`
 * and `\[…\]`, the text around them as text; LaTeX with none of these is one displayed formula.
 * Formulas in Markdown too ({@link withFormulas}). KaTeX is loaded the first time a formula is
 * shown (with its styles and fonts, all served by Kiln).
 */
import DOMPurify from "dompurify";
import type katexModule from "katex";

/** LaTeX longer than this is shown as its text: KaTeX lays it out on the page's thread. */
export const RENDER_LATEX_CHARS = 16 * 1024;

export type LatexPart = { text: string } | { math: string; display: boolean };

const DELIMITED = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|\$([^$]+?)\$/g;

/** `source` cut into text and formulas. */
export function latexParts(source: string): LatexPart[] {
  const parts: LatexPart[] = [];
  let last = 0;
  for (const match of source.matchAll(DELIMITED)) {
    if (match.index > last) parts.push({ text: source.slice(last, match.index) });
    const display = match[1] !== undefined || match[2] !== undefined;
    parts.push({ math: (match[1] ?? match[2] ?? match[3] ?? match[4]).trim(), display });
    last = match.index + match[0].length;
  }
  if (!parts.length) return [{ math: source.trim(), display: true }];
  if (last < source.length) parts.push({ text: source.slice(last) });
  return parts;
}

let loading: Promise<typeof katexModule> | undefined;

/** KaTeX and its styles, loaded once. */
export function loadKatex(): Promise<typeof katexModule> {
  loading ??= Promise.all([import("katex"), import("katex/dist/katex.min.css")]).then(([module]) => module.default);
  return loading;
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * KaTeX's HTML sanitized again: its own markup and styles only, no links, images or anything
 * that loads. The MathML keeps its TeX as an annotation (text only, unlike `annotation-xml`).
 */
const sanitizeFormulas = (html: string) =>
  DOMPurify.sanitize(html, {
    ADD_TAGS: ["semantics", "annotation"],
    ADD_ATTR: ["encoding"],
    FORBID_TAGS: ["a", "img", "image", "use", "style", "link", "iframe", "form", "input", "annotation-xml"],
    FORBID_ATTR: ["href", "xlink:href", "src", "action"],
  });

/**
 * One formula as KaTeX's HTML, sanitized again; undefined when KaTeX fails (a formula nested
 * so deeply that it runs out of stack: `throwOnError: false` covers only TeX's own errors).
 * Nothing in it can run or load: `trust: false` refuses `\href`, `\url`, `\includegraphics`
 * and the HTML commands; TeX's errors are shown in the formula, in red.
 */
function formulaHtml(katex: typeof katexModule, math: string, display: boolean): string | undefined {
  try {
    return sanitizeFormulas(
      katex.renderToString(math, { displayMode: display, throwOnError: false, trust: false, maxExpand: 1000, maxSize: 20, strict: "ignore", output: "htmlAndMathml" }),
    );
  } catch {
    return undefined;
  }
}

/** `text` as HTML text: `&`, `<`, `>` and quotes escaped. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The whole of `source` as HTML: its text escaped, its formulas by KaTeX (as their TeX where KaTeX fails). */
export function renderLatex(katex: typeof katexModule, source: string): string {
  return latexParts(source)
    .map((part) => ("text" in part ? escapeHtml(part.text) : (formulaHtml(katex, part.math, part.display) ?? escapeHtml(part.math))))
    .join("");
}

/** The elements rendered Markdown holds a formula in, its TeX as their text (see Markdown.tsx). */
const FORMULA_SELECTOR = "span.math-inline, span.math-display";

/**
 * The longest formula in Markdown that KaTeX lays out: Markdown is the model's, which may be
 * steered to write formulas that take KaTeX long (a thousand characters of `x^2+x^2+…` take it
 * about 20 ms, of a matrix about 45 ms, on the page's thread). Longer ones show their TeX.
 */
export const MAX_FORMULA_CHARS = 1000;
/** How long laying out a Markdown's formulas keeps the page's thread before letting it go. */
const SLICE_MS = 25;

/**
 * Rendered (and sanitized) Markdown with its formulas ({@link FORMULA_SELECTOR}) laid out by
 * KaTeX, a few at a time between the page's other tasks; undefined when it has none, or more
 * TeX than {@link RENDER_LATEX_CHARS} in all. A formula longer than {@link MAX_FORMULA_CHARS},
 * or that KaTeX fails on, keeps its TeX.
 */
export async function withFormulas(katex: typeof katexModule, html: string): Promise<string | undefined> {
  const template = document.createElement("template");
  template.innerHTML = html;
  const formulas = [...template.content.querySelectorAll(FORMULA_SELECTOR)];
  const chars = formulas.reduce((sum, formula) => sum + (formula.textContent?.length ?? 0), 0);
  if (!formulas.length || chars > RENDER_LATEX_CHARS) return undefined;
  let slice = performance.now();
  for (const formula of formulas) {
    const math = formula.textContent ?? "";
    const laidOut = math.length <= MAX_FORMULA_CHARS ? formulaHtml(katex, math, formula.classList.contains("math-display")) : undefined;
    if (laidOut !== undefined) formula.innerHTML = laidOut;
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setTimeout(resolve));
      slice = performance.now();
    }
  }
  return template.innerHTML;
}
