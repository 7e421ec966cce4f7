/**
 * What an HTML output frame (see SandboxedHtml.tsx) may do. This module is imported by the
 * Node code that builds the app's Content-Security-Policy header (vite/headers.ts), so it
 * must stay free of React, the DOM and any import at all.
 */

/**
 * Kiln's one script in an HTML output frame (the text between its `<script>` tags): reports
 * the document's height to the parent so the frame fits its content. Scripts from Python do
 * not run; this one is allowed by its hash, in the frame's own policy and in the app's.
 * Editing it means updating {@link FRAME_RESIZE_SCRIPT_SHA256} (frame-policy.test.ts checks).
 */
export const FRAME_RESIZE_SCRIPT = `new ResizeObserver(() => parent.postMessage({ kilnFrameHeight: document.documentElement.scrollHeight }, "*"))
  .observe(document.documentElement);`;

/** The CSP source expression for {@link FRAME_RESIZE_SCRIPT}: `'sha256-<base64 of its SHA-256>'`. */
export const FRAME_RESIZE_SCRIPT_SHA256 = "'sha256-NKy697tudWRBfoQ8Lhp5D0j3d7LV8FBQur4q/eGCPpc='";

/**
 * The frame's own Content-Security-Policy (a `<meta>` at the very start of its document, on top
 * of the app's policy, which a `srcdoc` frame inherits): nothing remote loads and nothing
 * phones home. Images and media only from `data:`/`blob:`, inline styles only, no fetches,
 * forms or `<base>`, and no script but {@link FRAME_RESIZE_SCRIPT}.
 */
export const FRAME_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "img-src data: blob:",
  "style-src 'unsafe-inline'",
  "font-src data:",
  "media-src data: blob:",
  `script-src ${FRAME_RESIZE_SCRIPT_SHA256}`,
  "connect-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
].join("; ");
