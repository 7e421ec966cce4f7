/**
 * What the app's page may connect to, and the Content-Security-Policy that narrows it at run
 * time to the saved Jupyter server (docs/jupyter.md, "Trust"). The header (vite/headers.ts)
 * cannot know the server a person enters, so it allows every origin a person might configure;
 * the page's first script adds a `<meta http-equiv="Content-Security-Policy">` before anything
 * connects. Policies only add up: a connection must pass the header and this one, and nothing
 * in the page, its frames or its workers can lift it. The Python host frames (`srcdoc`) and
 * their `data:` workers, made later, inherit it. This module touches no page until called, so
 * that the header's code can import it.
 */

/**
 * Where the page's HTTP may go, the same in the header and after narrowing: model APIs, Jupyter
 * servers, package mirrors at any base URL over TLS, and local servers (a local model, a local
 * Jupyter server). None of these sources matches a WebSocket (`ws:`, `wss:`): in Chromium and in
 * Firefox ESR a host source of `http:` or a scheme `https:` does not let a WebSocket through.
 */
export const HTTP_CONNECT_SOURCES = ["https:", "http://localhost:*", "http://127.0.0.1:*"] as const;

/**
 * The WebSockets the header allows for a Jupyter kernel: a server on this device, or any over
 * TLS, as for HTTP. The page narrows them to the saved server's origin ({@link pageConnectPolicy}).
 */
export const KERNEL_SOCKET_SOURCES = ["ws://localhost:*", "ws://127.0.0.1:*", "wss:"] as const;

/** A host that a CSP host source can name as it is: letters, digits, dots and hyphens (never IPv6 brackets, `;` or `,`). */
const PLAIN_HOST = /^[a-z0-9.-]+$/;

/**
 * The WebSocket origin of a Jupyter server's URL, as a CSP source: `ws://host:port` for
 * `http://host:port/…`, `wss://host` for `https://host/…` (a default port is left out, and then
 * matches that port only). Undefined when no server is set, or when the URL is not one a
 * source can name exactly (an IPv6 address, a host with characters a policy would read as
 * separators): the page then allows no WebSocket at all.
 */
export function kernelSocketSource(serverUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(serverUrl.trim());
  } catch {
    return undefined;
  }
  const scheme = { "http:": "ws", "https:": "wss" }[url.protocol];
  if (!scheme || !PLAIN_HOST.test(url.hostname)) return undefined;
  return `${scheme}://${url.hostname}${url.port ? `:${url.port}` : ""}`;
}

/**
 * The policy the page adds: `connect-src` as the header's, minus every WebSocket but the saved
 * Jupyter server's origin. The page's own origin is named instead of `'self'`, which would
 * also match a WebSocket to it. In development, `'self'` stays: Vite's dev server talks to the
 * page over a WebSocket of the page's origin.
 */
export function pageConnectPolicy({ pageOrigin, serverUrl, dev = false }: { pageOrigin: string; serverUrl: string; dev?: boolean }): string {
  const socket = kernelSocketSource(serverUrl);
  return `connect-src ${[dev ? "'self'" : pageOrigin, ...HTTP_CONNECT_SOURCES, ...(socket ? [socket] : [])].join(" ")}`;
}

/** The kernel WebSocket source this page allowed when it was opened ('' for none); undefined before the page narrowed its policy. */
let allowedSocket: string | undefined;

/**
 * Adds {@link pageConnectPolicy} for `serverUrl` to the page (once: a later call changes
 * nothing, as a second policy could only narrow further).
 */
export function narrowPageConnections(serverUrl: string, dev: boolean): void {
  if (allowedSocket !== undefined) return;
  const meta = document.createElement("meta");
  meta.httpEquiv = "Content-Security-Policy";
  meta.content = pageConnectPolicy({ pageOrigin: location.origin, serverUrl, dev });
  document.head.append(meta);
  allowedSocket = kernelSocketSource(serverUrl) ?? "";
}

/**
 * Whether this page may open the WebSocket of a Jupyter kernel at `serverUrl`: its origin is the
 * one the page allowed when it was opened (saving another server in Settings reloads the page).
 * A page that has not narrowed its policy (the test harness) has the header's.
 */
export function kernelSocketAllowed(serverUrl: string): boolean {
  return allowedSocket === undefined || allowedSocket === (kernelSocketSource(serverUrl) ?? "");
}
