import type { Config } from "dompurify";
import { useEffect, useRef, useState } from "react";
import { FRAME_CONTENT_SECURITY_POLICY, FRAME_RESIZE_SCRIPT } from "./frame-policy";
import { hookedSanitizer } from "./sanitizer";
import { useSpreadWork } from "./spread-work";

const charsOf = (html: string) => html.length;

/**
 * HTML output keeps its looks (pandas' tables come with `<style>` elements, `style` and `id`
 * attributes) but loses everything that runs, submits, navigates on its own or loads from
 * elsewhere. The frame's policy (frame-policy.ts) blocks the same again.
 */
const HTML_OUTPUT_CONFIG: Config = {
  WHOLE_DOCUMENT: false,
  // Otherwise a leading <style> (pandas' Styler starts with one) is parsed into <head> and lost.
  FORCE_BODY: true,
  FORBID_TAGS: [
    "script", "meta", "base", "form", "input", "button", "textarea", "select", "option", "optgroup",
    "datalist", "iframe", "frame", "frameset", "object", "embed", "link", "portal", "fencedframe",
    "noscript", "noembed", "noframes", "xmp", "plaintext",
  ],
  FORBID_ATTR: ["srcset", "imagesrcset", "sizes", "ping", "formaction", "action", "background"],
  // DOMPurify's default URL schemes, and `blob:` so that blob images survive to the hook below.
  ALLOWED_URI_REGEXP: /^(?:(?:(?:f|ht)tps?|mailto|tel|callto|sms|cid|xmpp|matrix|blob):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
};

/** What may load inside the frame: `data:` and `blob:` URLs. */
const LOCAL_URL = /^(?:data:|blob:)/i;
/** Attributes whose URL the browser fetches by itself. */
const FETCHED = ["src", "poster"];

function afterSanitizeAttributes(node: Element): void {
  for (const name of FETCHED) {
    const value = node.getAttribute(name);
    if (value !== null && !LOCAL_URL.test(value.trim())) node.removeAttribute(name);
  }
  // SVG's <image>, <use>, <feImage> fetch their href; links (<a>) only navigate when clicked.
  if (node.nodeName.toLowerCase() !== "a") {
    for (const name of ["href", "xlink:href"]) {
      const value = node.getAttribute(name)?.trim();
      if (value !== undefined && !value.startsWith("#") && !LOCAL_URL.test(value)) node.removeAttribute(name);
    }
  }
}

/** HTML from Python without scripts, handlers, forms, frames, meta refreshes or remote loads. */
export const sanitizeHtmlOutput = hookedSanitizer(HTML_OUTPUT_CONFIG, afterSanitizeAttributes);

/**
 * The frame's document: its Content-Security-Policy first (a `<meta>` only applies to what
 * follows it), then the sanitized HTML, then Kiln's resize reporter (the only script allowed).
 */
export function htmlOutputDocument(html: string): string {
  return (
    `<!doctype html><meta http-equiv="Content-Security-Policy" content="${FRAME_CONTENT_SECURITY_POLICY}">` +
    `<meta charset="utf-8"><style>body{margin:0;font:14px system-ui,sans-serif}</style>` +
    `${sanitizeHtmlOutput(html)}<script>${FRAME_RESIZE_SCRIPT}</script>`
  );
}

/**
 * HTML from Python, sanitized and shown in an iframe sandboxed without `allow-same-origin`:
 * it has an opaque origin and cannot reach the app, its storage or the API key. Its own
 * scripts do not run, and it loads nothing from elsewhere (see frame-policy.ts).
 */
export function SandboxedHtml({ html, title = "HTML output" }: { html: string; title?: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState(40);
  // Sanitized in its turn with the other outputs, not while the page renders them all (see spread-work.ts).
  const srcDoc = useSpreadWork(html, htmlOutputDocument, charsOf);
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (event.source !== frame.current?.contentWindow) return;
      const reported = (event.data as { kilnFrameHeight?: unknown })?.kilnFrameHeight;
      if (typeof reported === "number" && reported > 0) setHeight(Math.min(Math.ceil(reported), 2000));
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, []);
  if (srcDoc === undefined) return <div className="html-output" aria-busy="true" style={{ height }} />;
  return (
    <iframe
      ref={frame}
      className="html-output"
      title={title}
      sandbox="allow-scripts"
      srcDoc={srcDoc}
      style={{ height }}
    />
  );
}
