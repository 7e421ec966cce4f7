import type { MimeBundle } from "../../workers/python-api";
import { useEffect, useState } from "react";
import { groupDigits } from "../../workers/output-limits";
import { JsonTree } from "./JsonTree";
import { jsonTree } from "./json-tree";
import { loadKatex, RENDER_LATEX_CHARS, renderLatex } from "./latex";
import { SpreadMarkdown } from "./Markdown";
import { SandboxedHtml } from "./SandboxedHtml";
import { useSpreadWork } from "./spread-work";

/**
 * HTML and SVG longer than this are shown as their source text, not rendered: sanitizing them
 * takes the page's thread about a millisecond per thousand characters of dense markup.
 */
export const RENDER_HTML_CHARS = 64 * 1024;
/** Markdown from Python longer than this is shown as its text (marked and its sanitizing cost about three times HTML's). */
export const RENDER_MARKDOWN_CHARS = 32 * 1024;

/** Show the richest representation in a mime bundle, IPython's order of preference. */
export function RichOutput({ data }: { data: MimeBundle }) {
  const alt = data["text/plain"] ?? "Image output";
  if (data["image/png"]) return <img className="image-output" alt={alt} src={`data:image/png;base64,${data["image/png"]}`} />;
  if (data["image/jpeg"]) return <img className="image-output" alt={alt} src={`data:image/jpeg;base64,${data["image/jpeg"]}`} />;
  const svg = data["image/svg+xml"];
  if (svg && svg.length > RENDER_HTML_CHARS) return <SourceText kind="SVG" text={svg} />;
  if (svg) {
    // As an <img>, an SVG's scripts never run.
    return <img className="image-output" alt={alt} src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`} />;
  }
  const html = data["text/html"];
  if (html && html.length > RENDER_HTML_CHARS) return <SourceText kind="HTML" text={html} />;
  if (html) return <SandboxedHtml html={html} />;
  const markdown = data["text/markdown"];
  if (markdown && markdown.length > RENDER_MARKDOWN_CHARS) return <SpreadText className="markdown markdown-plain" text={markdown} as="div" />;
  if (markdown) return <SpreadMarkdown source={markdown} />;
  if (data["application/json"]) return <JsonOutput text={data["application/json"]} />;
  if (data["text/latex"]) return <LatexOutput source={data["text/latex"]} />;
  const script = data["application/javascript"];
  if (script !== undefined) {
    return (
      <>
        <p className="notice notice-info">{JAVASCRIPT_NOT_RUN}</p>
        <SpreadText className="text-output source-output" text={script} />
      </>
    );
  }
  return <SpreadText className="text-output" text={data["text/plain"] ?? ""} />;
}

/** Text shown at once up to this length; longer text is laid out in its turn with other outputs (see spread-work.ts). */
const SPREAD_TEXT_CHARS = 8 * 1024;
const same = (text: string) => text;
const lengthOf = (text: string) => text.length;

/** Text in a block of its own; a long one waits its turn, so that many of them are not laid out in one task. */
function SpreadText({ text, className, as: Tag = "pre" }: { text: string; className: string; as?: "pre" | "div" }) {
  const shown = useSpreadWork(text.length > SPREAD_TEXT_CHARS ? text : undefined, same, lengthOf);
  if (text.length <= SPREAD_TEXT_CHARS) return <Tag className={className}>{text}</Tag>;
  return (
    <Tag className={className} aria-busy={shown === undefined}>
      {shown}
    </Tag>
  );
}

/** Markup too large to render, as its text. */
function SourceText({ kind, text }: { kind: string; text: string }) {
  return (
    <>
      <p className="notice notice-info">
        {`This ${kind} is shown as its source text: at ${groupDigits(text.length)} characters or more, it is too large to render (the limit is ${groupDigits(RENDER_HTML_CHARS)}).`}
      </p>
      <SpreadText className="text-output source-output" text={text} />
    </>
  );
}

/** What a JavaScript output shows above its code: it is never run. */
export const JAVASCRIPT_NOT_RUN = "JavaScript output is not run in Kiln: it is shown as text.";

const jsonLength = (text: string) => text.length;

/** JSON as a tree that folds (see json-tree.ts), or as its text when it is too large or not JSON. */
function JsonOutput({ text }: { text: string }) {
  const tree = useSpreadWork(text, jsonTree, jsonLength);
  if (tree) return <JsonTree tree={tree} />;
  return <SpreadText className="json-output" text={text} />;
}

/** LaTeX rendered by KaTeX, shown as its text until KaTeX has loaded (and when it cannot). */
function LatexOutput({ source }: { source: string }) {
  const [rendered, setRendered] = useState<{ source: string; html: string }>();
  const [failed, setFailed] = useState(false);
  const renders = source.length <= RENDER_LATEX_CHARS;
  useEffect(() => {
    if (!renders) return undefined;
    let live = true;
    loadKatex().then(
      (katex) => live && setRendered({ source, html: renderLatex(katex, source) }),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [source, renders]);
  if (rendered?.source === source) return <div className="latex-output" dangerouslySetInnerHTML={{ __html: rendered.html }} />;
  return (
    <>
      {failed && <p className="notice notice-warning">This LaTeX is shown as its text: KaTeX could not be loaded.</p>}
      {!renders && <p className="notice notice-info">{`This LaTeX is shown as its text: at ${groupDigits(source.length)} characters it is too long to render (the limit is ${groupDigits(RENDER_LATEX_CHARS)}).`}</p>}
      <SpreadText className="text-output" text={source} />
    </>
  );
}
