import type { IncomingMessage, ServerResponse } from "node:http";
import type { Plugin } from "vite";

/**
 * Headers every response carries, in dev, preview and (see README) production.
 *
 * - COOP + COEP make pages cross-origin isolated, so SharedArrayBuffer exists (interrupts,
 *   `input()`, sleep).
 * - The Python worker runs with an opaque origin (`null`), so everything it fetches from
 *   us (its own module, Pyodide's core) is a cross-origin request: CORS and CORP allow it.
 */
export const isolationHeaders: Record<string, string> = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "cross-origin",
  "Access-Control-Allow-Origin": "*",
};

/**
 * Headers for the widget's page (`embed.html`) on top of {@link isolationHeaders}.
 *
 * A page embedded in a host that is not cross-origin isolated is not isolated by COOP and
 * COEP (COOP is ignored in frames; COEP only counts when every ancestor has it). Chromium's
 * Document-Isolation-Policy isolates the frame by itself, whatever its host sends. Its
 * workers share its memory: SharedArrayBuffers posted to them work.
 */
export const embedHeaders: Record<string, string> = {
  "Document-Isolation-Policy": "isolate-and-require-corp",
};

/** Whether a request path is the widget's page. */
export function isEmbedPage(url: string | undefined): boolean {
  const pathname = (url ?? "").split(/[?#]/)[0];
  return pathname.endsWith("/embed.html") || pathname.endsWith("/embed");
}

/** Sends {@link embedHeaders} with the widget's page in `vite` dev and preview alike. */
export function embedIsolation(): Plugin {
  const middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    if (isEmbedPage(req.url)) for (const [key, value] of Object.entries(embedHeaders)) res.setHeader(key, value);
    next();
  };
  return {
    name: "kiln-embed-isolation",
    configureServer: (server) => void server.middlewares.use(middleware),
    configurePreviewServer: (server) => void server.middlewares.use(middleware),
  };
}
