import { useEffect, useRef, useState } from "react";

/** Reports the document's height to the parent so the frame fits its content. */
const RESIZE_SCRIPT = `<script>
new ResizeObserver(() => parent.postMessage({ kilnFrameHeight: document.documentElement.scrollHeight }, "*"))
  .observe(document.documentElement);
</script>`;

/**
 * HTML from Python, shown in an iframe sandboxed without `allow-same-origin`: its scripts
 * run with an opaque origin and cannot reach the app, its storage or the API key.
 */
export function SandboxedHtml({ html, title = "HTML output" }: { html: string; title?: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState(40);
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (event.source !== frame.current?.contentWindow) return;
      const reported = (event.data as { kilnFrameHeight?: unknown })?.kilnFrameHeight;
      if (typeof reported === "number" && reported > 0) setHeight(Math.min(Math.ceil(reported), 2000));
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, []);
  return (
    <iframe
      ref={frame}
      className="html-output"
      title={title}
      sandbox="allow-scripts"
      srcDoc={`<!doctype html><meta charset="utf-8"><style>body{margin:0;font:14px system-ui,sans-serif}</style>${html}${RESIZE_SCRIPT}`}
      style={{ height }}
    />
  );
}
