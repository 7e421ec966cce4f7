import type { Config } from "dompurify";
import { Lexer, type Token } from "marked";
import type { MimeBundle } from "../../workers/python-api";
import { fenced, type OutputCleaner } from "../chat/export";
import { linkHref, MARKDOWN_CONFIG, readsQuickly } from "./Markdown";
import { hookedSanitizer } from "./sanitizer";

/*
 * What an export carries is opened later by readers that trust it (Jupyter, VS Code, GitHub,
 * Markdown viewers): they render its HTML, SVG and Markdown as they are and run what its MIME
 * types ask for. So nothing in it may load from elsewhere or run. Links stay: they load
 * nothing until they are clicked. See docs/exports.md.
 */

const XHTML = "http://www.w3.org/1999/xhtml";
/** The namespaces an `xmlns` attribute may name (a namespace is never fetched, but other URLs are not kept). */
const NAMESPACES = new Set([
  "http://www.w3.org/2000/svg",
  "http://www.w3.org/1999/xlink",
  XHTML,
  "http://www.w3.org/1998/Math/MathML",
  "http://www.w3.org/XML/1998/namespace",
]);
/** Attributes whose value is a URL, that a reader may fetch on its own (or, for links, on a click). */
const URL_ATTRIBUTES = new Set([
  "src", "href", "xlink:href", "srcset", "imagesrcset", "poster", "background", "action", "formaction",
  "data", "codebase", "archive", "classid", "cite", "longdesc", "usemap", "manifest", "icon", "profile",
  "lowsrc", "dynsrc", "ping", "xml:base", "itemtype", "itemid",
]);
/** Attributes that are text for people, which may mention a URL. */
const TEXT_ATTRIBUTES = new Set(["alt", "title", "aria-label", "aria-description"]);
/** Images that load nothing: `data:` URLs of an image type. */
const LOCAL_IMAGE = /^\s*data:image\/[-+.\w]+[;,]/i;
/** A URL with a host, `scheme://…` or `//…`, anywhere in a value. */
const HOSTED_URL = /(?:^|[^\w+.-])(?:[a-z][\w+.-]*:)?\/\/[^/\s]/i;

/**
 * CSS as a reader's CSS parser sees its names: escapes decoded (`\75 rl(` is `url(`), lower
 * case. Twice, with comments and without, since a comment inside a string is not one.
 */
function cssReadings(css: string): string[] {
  const decode = (text: string) =>
    text
      .replace(/\\(?:([0-9a-f]{1,6})[ \t\n\f]?|\n|([\s\S]))/gi, (_, hex: string | undefined, char: string | undefined) => {
        if (hex === undefined) return char ?? "";
        const code = parseInt(hex, 16);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
      })
      .toLowerCase();
  return [decode(css), decode(css.replace(/\/\*[\s\S]*?(?:\*\/|$)/g, ""))];
}

/** Whether CSS loads anything: `@import`, or a `url()` (other than `url(#id)`), `image-set()`, `image()` … */
export function cssLoads(css: string): boolean {
  return cssReadings(css).some((text) => {
    if (text.includes("@import") || /<\/style/.test(text)) return true;
    for (const match of text.matchAll(/(url|src|image-set|image|cross-fade|element|expression)\s*\(\s*['"]?\s*(.|$)/g)) {
      if (match[1] !== "url" || match[2] !== "#") return true;
    }
    return false;
  });
}

/**
 * CSS without what loads: each declaration, rule head or at-rule that would is dropped; if the
 * rest still would (a string cut in two, say), nothing is kept.
 */
function cleanCss(css: string): string {
  if (!cssLoads(css)) return css;
  const kept = css
    .split(/([;{}])/)
    .map((part, index) => (index % 2 === 0 && cssLoads(part) ? "" : part))
    .join("");
  return cssLoads(kept) ? "" : kept;
}

/** The attribute's value to keep, or undefined to drop it. */
function keptValue(element: Element, name: string, value: string): string | undefined {
  if (name.startsWith("on")) return undefined;
  if (name === "xmlns" || name.startsWith("xmlns:")) return NAMESPACES.has(value.trim()) ? value : undefined;
  if (name === "style") return cleanCss(value) || undefined;
  if (URL_ATTRIBUTES.has(name)) {
    const href = name === "href" || name === "xlink:href";
    if (href && value.trim().startsWith("#")) return value;
    // A link loads nothing by itself; only http(s) and mailto, never `javascript:`.
    if (href && (element.localName === "a" || element.localName === "area")) return linkHref(value) ?? undefined;
    if ((href || name === "src") && element.localName !== "use" && LOCAL_IMAGE.test(value)) return value;
    return undefined;
  }
  if (cssLoads(value)) return undefined;
  if (HOSTED_URL.test(value) && !TEXT_ATTRIBUTES.has(name)) return undefined;
  return value;
}

/** An image from elsewhere becomes a link to it labelled with its alt text (or text alone, inside a link). */
function imageAsLink(image: Element, src: string): void {
  const document = image.ownerDocument;
  const label = image.getAttribute("alt") || src;
  const href = image.closest("a") ? null : linkHref(src);
  if (!href) {
    image.replaceWith(document.createTextNode(label));
    return;
  }
  const link = document.createElement("a");
  link.setAttribute("href", href);
  link.textContent = label;
  image.replaceWith(link);
}

function afterSanitizeAttributes(element: Element): void {
  if (element.namespaceURI === XHTML && element.localName === "img") {
    const src = element.getAttribute("src");
    if (src !== null && !LOCAL_IMAGE.test(src)) return imageAsLink(element, src);
  }
  for (const attribute of Array.from(element.attributes)) {
    const kept = keptValue(element, attribute.name.toLowerCase(), attribute.value);
    if (kept === undefined) element.removeAttributeNode(attribute);
    else if (kept !== attribute.value) attribute.value = kept;
  }
  if (element.localName === "style") element.textContent = cleanCss(element.textContent ?? "");
}

/** Elements that run, embed, submit, animate attributes (an `<set>` can give `<image>` a URL) or parse oddly. */
const FORBID_TAGS = [
  "script", "meta", "base", "link", "iframe", "frame", "frameset", "object", "embed", "applet", "portal",
  "fencedframe", "form", "input", "button", "textarea", "select", "option", "optgroup", "datalist",
  "noscript", "noembed", "noframes", "xmp", "plaintext", "animate", "animatemotion", "animatetransform",
  "animatecolor", "set", "discard",
];
const FORBID_ATTR = ["srcset", "imagesrcset", "sizes", "ping", "formaction", "action", "background", "poster", "attributename"];

// A leading <style> (pandas' Styler starts with one) is kept, not parsed into <head> and lost.
const cleanHtml = hookedSanitizer({ FORCE_BODY: true, FORBID_TAGS, FORBID_ATTR }, afterSanitizeAttributes);
const cleanSvg = hookedSanitizer(
  { USE_PROFILES: { svg: true, svgFilters: true }, FORBID_TAGS, FORBID_ATTR },
  afterSanitizeAttributes,
);
/** HTML inside Markdown: Kiln's Markdown profile (no styles, SVG or forms), with the export's URL rules. */
const cleanMarkdownHtml = hookedSanitizer(MARKDOWN_CONFIG satisfies Config, afterSanitizeAttributes);

/** HTML as the HTML parser reads it, serialized: two pieces read the same when these are equal. */
function parsed(html: string): string {
  return new DOMParser().parseFromString(`<!doctype html><body>${html}`, "text/html").body.innerHTML;
}

interface Edit {
  raw: string;
  replacement: string;
}

function children(token: Token): Token[] {
  if (token.type === "list") return token.items as Token[];
  if (token.type === "table") {
    const cells = [...token.header, ...token.rows.flat()] as { tokens: Token[] }[];
    return cells.flatMap((cell) => cell.tokens);
  }
  return "tokens" in token && Array.isArray(token.tokens) ? token.tokens : [];
}

/** The parts of a Markdown token that load or run, in order, each with what replaces it. */
function edits(token: Token, inLink = false): Edit[] {
  if (token.type === "code" || token.type === "codespan") return [];
  if (token.type === "image") {
    if (LOCAL_IMAGE.test(token.href)) return [];
    const label = `Image: ${token.text || token.href}`;
    const href = inLink ? null : linkHref(token.href);
    // `new URL()` has encoded spaces and angle brackets, so `<…>` holds it whole.
    return [{ raw: token.raw, replacement: href ? `[${label}](<${href}>)` : label }];
  }
  if (token.type === "link" && !token.href.trim().startsWith("#") && !linkHref(token.href)) {
    return [{ raw: token.raw, replacement: token.text }];
  }
  if (token.type === "html") {
    let clean = cleanMarkdownHtml(token.raw);
    // An opening tag alone (inline HTML around Markdown text) stays open: the sanitizer closed it.
    if (!token.block && !token.raw.includes("</")) clean = clean.replace(/<\/[a-z][\w-]*>$/i, "");
    return parsed(clean) === parsed(token.raw) ? [] : [{ raw: token.raw, replacement: clean }];
  }
  return children(token).flatMap((child) => edits(child, inLink || token.type === "link"));
}

/** `raw` with each edit made in turn, or undefined when one is not found there (a part of a nested block). */
function applyEdits(raw: string, list: Edit[]): string | undefined {
  let result = "";
  let cursor = 0;
  for (const { raw: part, replacement } of list) {
    const at = raw.indexOf(part, cursor);
    if (at < 0) return undefined;
    result += raw.slice(cursor, at) + replacement;
    cursor = at + part.length;
  }
  return result + raw.slice(cursor);
}

/** A block as a code block showing its source: inert in every Markdown reader. */
function asSource(raw: string): string {
  const body = raw.replace(/\n+$/, "");
  return `${fenced(body)}${raw.slice(body.length) || "\n"}`;
}

/**
 * Markdown that loads and runs nothing, as marked (the parser JupyterLab uses) reads it: an image
 * from elsewhere becomes a link to it, `Image: <alt text>`; raw HTML is cleaned to Kiln's Markdown
 * profile (images likewise); a link to anything but http(s), mailto or `#…` becomes its text. A
 * block whose parts cannot be cleaned in place, or text that marked cannot read quickly (see
 * `readsQuickly` in Markdown.tsx), is kept as a code block showing its source.
 */
export function cleanMarkdown(source: string): string {
  let text = source.replace(/\r\n?/g, "\n");
  if (!readsQuickly(text)) return asSource(text);
  // A replacement can form a new part to clean (an image in an image's alt text): until none is left.
  for (let round = 0; round < 4; round++) {
    let tokens: Token[];
    try {
      tokens = Lexer.lex(text, { gfm: true });
    } catch {
      return asSource(text);
    }
    const blocks = tokens.map((block) => ({ raw: block.raw, edits: edits(block) }));
    if (blocks.every((block) => block.edits.length === 0)) return text;
    if (blocks.map((block) => block.raw).join("") !== text) return asSource(text);
    text = blocks.map(({ raw, edits: list }) => (list.length ? (applyEdits(raw, list) ?? asSource(raw)) : raw)).join("");
  }
  return asSource(source.replace(/\r\n?/g, "\n"));
}

/** TeX that links, styles, loads extensions or fonts when MathJax or KaTeX typesets it. */
const LIVE_TEX = /\\(?:href|url|style|class|cssid|data|require|html[a-z]*|mmltoken|unicode|includegraphics|texttip|mathtip|special)(?![a-z])/i;

/** The MIME types an export keeps, each cleaned; undefined drops the representation. */
const KNOWN_TYPES = new Map<string, (value: string) => string | undefined>([
  ["text/plain", (value) => value],
  ["text/html", (value) => cleanHtml(value)],
  ["image/svg+xml", (value) => cleanSvg(value)],
  ["text/markdown", cleanMarkdown],
  ["text/latex", (value) => (LIVE_TEX.test(value) ? undefined : value)],
  ["application/json", (value) => {
    try {
      JSON.parse(value);
      return value;
    } catch {
      return undefined;
    }
  }],
  ["image/png", base64],
  ["image/jpeg", base64],
]);

function base64(value: string): string | undefined {
  return /^[A-Za-z0-9+/=\s]*$/.test(value) ? value : undefined;
}

/**
 * A MIME bundle as an export carries it. Keys are trimmed and lower-cased (parameters such as
 * `; charset=…` dropped); of two that become one, the one already written so is kept, both
 * being cleaned alike. Only the types Kiln shows survive: HTML and SVG cleaned of scripts,
 * handlers and everything that loads from elsewhere; Markdown as {@link cleanMarkdown}; LaTeX
 * that would link, style or load is dropped; JSON only when it parses; PNG and JPEG only as
 * base64. Every other type (JavaScript, Vega, widgets, …) is dropped; when that leaves no
 * `text/plain`, the dropped content becomes `text/plain`, headed by its type.
 */
export function cleanBundle(bundle: MimeBundle): MimeBundle {
  const cleaned: MimeBundle = {};
  const dropped: string[] = [];
  const entries = Object.entries(bundle).map(([key, value]) => ({ key, value, mime: key.split(";")[0].trim().toLowerCase() }));
  entries.sort((a, b) => Number(b.key === b.mime) - Number(a.key === a.mime));
  for (const { key, value, mime } of entries) {
    if (typeof value !== "string" || Object.hasOwn(cleaned, mime)) continue;
    const clean = KNOWN_TYPES.get(mime)?.(value);
    if (clean === undefined) dropped.push(`[${key.trim()}, not kept as such in this export]\n${value}`);
    else cleaned[mime] = clean;
  }
  if (cleaned["text/plain"] === undefined && dropped.length) cleaned["text/plain"] = dropped.join("\n");
  return cleaned;
}

/** Python's rich outputs and the conversation's Markdown as an export carries them (see src/chat/export.ts). */
export const exportCleaner: OutputCleaner = { bundle: cleanBundle, markdown: cleanMarkdown };
