import type { Config } from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import sql from "highlight.js/lib/languages/sql";
import { Lexer, Marked, type TokenizerAndRendererExtension } from "marked";
import { markedHighlight } from "marked-highlight";
import { useEffect, useMemo, useState } from "react";
import { escapeHtml, loadKatex, withFormulas } from "./latex";
import { hookedSanitizer } from "./sanitizer";
import { useSpreadWork } from "./spread-work";

for (const [name, language] of Object.entries({ bash, javascript, json, python, sql })) {
  hljs.registerLanguage(name, language);
}

/**
 * Formulas, as Jupyter and Pandoc read them: `$$…$$` and `\[…\]` displayed, `$…$` and `\(…\)`
 * inline. A `$…$` opens on a `$` followed by no space and closes on a `$` after no space and
 * before no digit, so that prices (`$5 and $10`) stay text. Their TeX is kept as it is (no
 * Markdown inside it), in a `span.math-inline` or `span.math-display` that KaTeX fills in once
 * loaded ({@link withFormulas}); until then, and where it cannot, the TeX shows.
 */
const FORMULA = /^(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|\$(?![\s$])((?:\\[\s\S]|[^\\$])+?)(?<!\s)\$(?!\d))/;
const FORMULA_START = /\$|\\[([]/;
const formulas: TokenizerAndRendererExtension = {
  name: "formula",
  level: "inline",
  start: (src) => {
    const index = src.search(FORMULA_START);
    return index < 0 ? undefined : index;
  },
  tokenizer(src) {
    const match = FORMULA.exec(src);
    if (!match) return undefined;
    const display = match[1] !== undefined || match[2] !== undefined;
    return { type: "formula", raw: match[0], text: (match[1] ?? match[2] ?? match[3] ?? match[4]).trim(), display };
  },
  renderer: (token) => `<span class="math-${token.display ? "display" : "inline"}">${escapeHtml(String(token.text))}</span>`,
};

const marked = new Marked(
  {
    gfm: true,
    // Task list items as text: form controls are not allowed in Markdown (see below).
    renderer: { checkbox: ({ checked }) => (checked ? "☑ " : "☐ ") },
    extensions: [formulas],
  },
  markedHighlight({
    emptyLangClass: "hljs",
    langPrefix: "hljs language-",
    highlight: (code, lang) => (hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang }).value : code),
  }),
);

/**
 * The Markdown profile: what marked produces plus common inline HTML, nothing interactive,
 * nothing styled, nothing that loads on its own. An allowlist; the forbid lists name what
 * matters most, so that widening the allowlist by mistake does not let it back in.
 */
export const MARKDOWN_CONFIG: Config = {
  ALLOWED_TAGS: [
    "a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite", "code", "col", "colgroup",
    "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre",
    "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "u", "ul", "var", "wbr",
  ],
  ALLOWED_ATTR: [
    "href", "src", "alt", "title", "class", "align", "colspan", "rowspan", "scope", "headers", "abbr",
    "span", "start", "reversed", "open", "lang", "dir", "datetime", "cite", "width", "height",
  ],
  FORBID_TAGS: [
    "style", "script", "form", "input", "button", "textarea", "select", "option", "optgroup", "datalist",
    "dialog", "iframe", "frame", "frameset", "object", "embed", "link", "meta", "base", "svg", "math",
    "template", "slot", "audio", "video", "source", "track", "picture", "map", "area", "canvas", "noscript",
  ],
  FORBID_ATTR: [
    "style", "id", "name", "popover", "popovertarget", "popovertargetaction", "command", "commandfor",
    "srcset", "sizes", "ping", "formaction", "form", "action", "background", "poster", "autofocus",
    "accesskey", "tabindex", "contenteditable", "role", "target", "rel",
  ],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  SANITIZE_DOM: true,
  SANITIZE_NAMED_PROPS: true,
  // DOMPurify's own check; the hook below is stricter. `blob:` here so blob images survive to it.
  ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto|blob):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
};

/** Images shown inline: only from `data:` (image types) and `blob:`. */
const INLINE_IMAGE_SRC = /^(?:data:image\/[-+.\w]+[;,]|blob:)/i;
const LINK_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
/**
 * Highlight.js's classes (`hljs`, `hljs-keyword`, `language-python`, `function_`) and a
 * formula's (whose text only ever reaches KaTeX); the app's own never pass.
 */
const KEPT_CLASS = /^(?:hljs(?:-[\w-]+)?|language-[\w+#.-]+|[a-z]+_+|math-(?:inline|display))$/;

/** An absolute http(s) or mailto URL, normalized, or null. */
export function linkHref(href: string | null): string | null {
  if (!href) return null;
  try {
    const url = new URL(href);
    return LINK_PROTOCOLS.has(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function makeLink(anchor: Element, href: string): void {
  anchor.setAttribute("href", href);
  anchor.setAttribute("target", "_blank");
  anchor.setAttribute("rel", "noopener noreferrer");
}

/** Images that would load from elsewhere become links; links get a new tab, or become text. */
function afterSanitizeAttributes(node: Element): void {
  const classes = node.getAttribute("class");
  if (classes !== null) {
    const kept = classes.split(/\s+/).filter((name) => KEPT_CLASS.test(name));
    if (kept.length) node.setAttribute("class", kept.join(" "));
    else node.removeAttribute("class");
  }
  const document = node.ownerDocument;
  if (node.nodeName === "IMG") {
    const src = node.getAttribute("src") ?? "";
    if (INLINE_IMAGE_SRC.test(src)) return;
    const label = node.getAttribute("alt") || src;
    // Inside a link, the image's label is enough (links do not nest).
    const href = node.closest("a") ? null : linkHref(src);
    if (href) {
      const anchor = document.createElement("a");
      makeLink(anchor, href);
      anchor.textContent = label;
      node.replaceWith(anchor);
    } else {
      node.replaceWith(document.createTextNode(label));
    }
  } else if (node.nodeName === "A") {
    const href = linkHref(node.getAttribute("href"));
    if (href) makeLink(node, href);
    // Dropped to its content, which DOMPurify then sanitizes like everything else.
    else node.replaceWith(...Array.from(node.childNodes));
  }
}

const sanitizeMarkdownHtml = hookedSanitizer(MARKDOWN_CONFIG, afterSanitizeAttributes);

/**
 * Markdown rendered with marked (code highlighted), then sanitized strictly: no scripts,
 * handlers, styles, forms, frames, popovers or ids; images only from `data:`/`blob:` (any other
 * becomes a link to it); links only http(s) and mailto, opened in a new tab without referrer.
 * Undefined when it cannot be rendered: when {@link readsQuickly} says no, or nested so deeply
 * that marked fails.
 */
export function renderMarkdown(source: string): string | undefined {
  if (!readsQuickly(source)) return undefined;
  try {
    return sanitizeMarkdownHtml(marked.parse(source, { async: false }));
  } catch {
    return undefined;
  }
}

/** Markdown longer than this is shown as its plain text. */
export const MAX_MARKDOWN_CHARS = 100_000;

/**
 * The most inline work marked is given: the sum, over the runs of inline text, of the square of
 * the number of `*`, `_`, `~`, `!`, `[` and `<` in each (see {@link readsQuickly}). A run with
 * 1000 of them takes marked 20–70 ms.
 */
export const MAX_INLINE_WORK = 1000 * 1000;
const COSTLY_INLINE = /[*_~![<]/g;

/**
 * Whether marked reads this Markdown in bounded time (tens of milliseconds). Marked's time grows
 * faster than the text: for deeply nested lists (nested deep enough, it runs out of stack), and
 * within one run of inline text (a paragraph, heading, list item or table cell) with the number
 * of `*`, `_` and `~` (each opens a scan for its closing delimiter), `!` (each restarts a scan
 * for an e-mail address), and `[` and `<` (which add to the cost of the others): `"_*a"` repeated
 * to 24 000 characters takes it 6 s, to 99 000 over two minutes; 99 000 `!` take it 5 s. So the text must be at most {@link MAX_MARKDOWN_CHARS} long, and its runs of inline
 * text, as marked's own block pass finds them (cheap), must stay within {@link MAX_INLINE_WORK}.
 * The one check for everything that hands Markdown to marked: rendering and exports.
 */
export function readsQuickly(source: string): boolean {
  if (source.length > MAX_MARKDOWN_CHARS) return false;
  const lexer = new Lexer({ gfm: true });
  try {
    lexer.blockTokens(source.replace(/\r\n?/g, "\n"));
  } catch {
    return false;
  }
  let work = 0;
  for (const { src } of lexer.inlineQueue) {
    const count = src.match(COSTLY_INLINE)?.length ?? 0;
    work += count * count;
    if (work > MAX_INLINE_WORK) return false;
  }
  return true;
}

/** Markdown, or its plain text when it cannot be rendered (see {@link renderMarkdown}). */
export function Markdown({ source }: { source: string }) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  return <RenderedMarkdown source={source} html={html} />;
}

const renderBoxed = (source: string) => ({ html: renderMarkdown(source) });
const charsOf = (source: string) => source.length;

/** {@link Markdown} rendered in its turn with other outputs (see spread-work.ts): Python's, of which a page may show many. */
export function SpreadMarkdown({ source }: { source: string }) {
  const done = useSpreadWork(source, renderBoxed, charsOf);
  if (!done) return <div className="markdown" aria-busy="true" />;
  return <RenderedMarkdown source={source} html={done.html} />;
}

function RenderedMarkdown({ source, html }: { source: string; html: string | undefined }) {
  const laidOut = useFormulas(html);
  if (html === undefined) return <div className="markdown markdown-plain">{source}</div>;
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: laidOut ?? html }} />;
}

/** `html` with its formulas laid out by KaTeX, once KaTeX has loaded; undefined until then, or if it has none (see {@link withFormulas}). */
function useFormulas(html: string | undefined): string | undefined {
  const hasFormulas = html !== undefined && html.includes('<span class="math-');
  const [laidOut, setLaidOut] = useState<{ html: string; result: string | undefined }>();
  useEffect(() => {
    if (!hasFormulas) return undefined;
    let live = true;
    loadKatex()
      .then((katex) => withFormulas(katex, html))
      .then(
        (result) => live && setLaidOut({ html, result }),
        // KaTeX could not be loaded: the formulas keep their TeX.
        () => undefined,
      );
    return () => {
      live = false;
    };
  }, [html, hasFormulas]);
  return laidOut && laidOut.html === html ? laidOut.result : undefined;
}

/**
 * Code highlighted as in Markdown code blocks (the same highlight.js, `hljs-*` spans), sanitized
 * like Markdown: HTML for a `<code class="hljs language-…">`. A language not registered above
 * comes back as escaped plain text.
 */
export function highlightCode(code: string, language: string): string {
  const html = hljs.getLanguage(language)
    ? hljs.highlight(code, { language }).value
    : escapeHtml(code);
  return sanitizeMarkdownHtml(html);
}
