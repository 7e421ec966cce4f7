import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Plugin } from "vite";
import { HOST_BOOTSTRAP } from "../src/host/host-bootstrap.ts";
import { FRAME_RESIZE_SCRIPT } from "../src/components/frame-policy.ts";
import { HTTP_CONNECT_SOURCES, KERNEL_SOCKET_SOURCES } from "../src/host/page-policy.ts";

/**
 * Headers every response carries, in dev, preview and (see docs/deploying.md) production.
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

const hash = (script: string) => `'sha256-${createHash("sha256").update(script).digest("base64")}'`;

/**
 * The pages' Content-Security-Policy. Scripts come only from the app itself, plus the two
 * inline scripts Kiln writes into frames (allowed by hash: the Python host frame's bootstrap,
 * and the height reporter of HTML output frames), `blob:` (the host frame runs its code from
 * one) and WebAssembly compilation. Frames made with `srcdoc` and the `data:` Python worker
 * inherit this policy. `connect-src` lets the page reach model APIs and Jupyter servers over
 * HTTPS and local servers; Python without network gets `default-src 'none'` on top (see
 * src/host/network-policy.ts). With `kernels`, the app's page may also open a Jupyter kernel's
 * WebSocket on any origin a person might configure: the page narrows that at run time to the
 * saved server's origin (src/host/page-policy.ts). The widget's page talks to no Jupyter server.
 * Images only from the app, `data:` and `blob:`: nothing remote loads on its own.
 */
export function contentSecurityPolicy({ frameAncestors, kernels, dev = false }: { frameAncestors: string | null; kernels: boolean; dev?: boolean }): string {
  // In development also Vite's own WebSocket, on every page.
  const sockets = dev ? ["ws:", "wss:"] : kernels ? KERNEL_SOCKET_SOURCES : [];
  // Vite's dev server adds an inline script of its own (a hash would disable 'unsafe-inline').
  const inline = dev ? "'unsafe-inline'" : `${hash(HOST_BOOTSTRAP)} ${hash(FRAME_RESIZE_SCRIPT)}`;
  const directives = [
    "default-src 'self'",
    `script-src 'self' blob: 'wasm-unsafe-eval' ${inline}`,
    "worker-src 'self' data:",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "media-src 'self' data: blob:",
    `connect-src ${["'self'", ...HTTP_CONNECT_SOURCES, ...sockets].join(" ")}`,
    "frame-src 'self' blob: data:",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    ...(frameAncestors ? [`frame-ancestors ${frameAncestors}`] : []),
  ];
  return directives.join("; ");
}

/** The app (every page but the widget): framed by nobody. */
export const appHeaders: Record<string, string> = {
  ...isolationHeaders,
  "Content-Security-Policy": contentSecurityPolicy({ frameAncestors: "'none'", kernels: true }),
};

/**
 * The widget's page (`embed.html`): framed by any site unless the deployer says otherwise
 * (docs/embedding.md: `frame-ancestors`). A page embedded in a host that is not cross-origin isolated is
 * not isolated by COOP and COEP (COOP is ignored in frames; COEP only counts when every
 * ancestor has it). Chromium's Document-Isolation-Policy isolates the frame by itself,
 * whatever its host sends. Its workers share its memory: SharedArrayBuffers posted to them work.
 */
export const embedHeaders: Record<string, string> = {
  ...isolationHeaders,
  "Content-Security-Policy": contentSecurityPolicy({ frameAncestors: null, kernels: false }),
  "Document-Isolation-Policy": "isolate-and-require-corp",
};

/**
 * Whether a request is for the widget's page: its path is exactly `<base>embed.html`, as the
 * browser sent it. Only that page may be framed. Any other spelling (`/embed`, `/x/embed.html`,
 * `/%2e/embed.html`, `/index.html/embed`) gets the app's headers, `frame-ancestors 'none'`
 * included, whatever the server answers it with (its fallback serves the app for unknown paths).
 */
export function isEmbedPage(url: string | undefined, base = "/"): boolean {
  const pathname = (url ?? "").split(/[?#]/)[0];
  return pathname === `${base}embed.html`;
}

/**
 * Sends {@link appHeaders} or {@link embedHeaders} with every response, in `vite` dev and
 * preview alike. Dev also allows what Vite's dev server needs (its inline React preamble and
 * its websocket).
 */
export function securityHeaders(): Plugin {
  let base = "/";
  const middleware =
    (dev: boolean) =>
    (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
      // (This runs before Vite's own middlewares: the path is as the browser sent it.)
      const embed = isEmbedPage(req.url, base);
      for (const [key, value] of Object.entries(embed ? embedHeaders : appHeaders)) res.setHeader(key, value);
      if (dev) res.setHeader("Content-Security-Policy", contentSecurityPolicy({ frameAncestors: embed ? null : "'none'", kernels: !embed, dev }));
      next();
    };
  return {
    name: "kiln-security-headers",
    configResolved: (config) => void (base = config.base),
    // The exact values for a static host's configuration (docs/deploying.md).
    generateBundle() {
      const source = JSON.stringify({ "embed.html": embedHeaders, "every other response": appHeaders }, null, 2);
      this.emitFile({ type: "asset", fileName: "headers.json", source });
    },
    configureServer: (server) => void server.middlewares.use(middleware(true)),
    configurePreviewServer: (server) => void server.middlewares.use(middleware(false)),
  };
}
