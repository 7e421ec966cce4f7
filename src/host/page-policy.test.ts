import { describe, expect, it } from "vitest";
import { kernelSocketSource, pageConnectPolicy } from "./page-policy";

const PAGE = "https://kiln.example";

/** The sources of the policy's one directive, `connect-src`. */
function connectSources(policy: string): string[] {
  expect(policy.split(";"), "one directive").toHaveLength(1);
  const [name, ...sources] = policy.trim().split(/\s+/);
  expect(name).toBe("connect-src");
  return sources;
}

/** Sources that can let a WebSocket through: a WebSocket scheme, `'self'` (which matches the page's own `ws:`/`wss:`), or any wildcard. */
const opensSockets = (source: string) => /^(ws|wss):/i.test(source) || source === "'self'" || source === "*";

describe("the page's connect-src, narrowed to the saved Jupyter server", () => {
  it("with no server set, keeps the header's HTTP sources and lets no WebSocket through, the page's own origin included", () => {
    const sources = connectSources(pageConnectPolicy({ pageOrigin: PAGE, serverUrl: "" }));
    expect(sources).toEqual([PAGE, "https:", "http://localhost:*", "http://127.0.0.1:*"]);
    expect(sources.filter(opensSockets)).toEqual([]);
  });

  it("with a local server, allows the WebSocket of that origin only (its port, not every port)", () => {
    const sources = connectSources(pageConnectPolicy({ pageOrigin: PAGE, serverUrl: "http://127.0.0.1:8888" }));
    expect(sources.filter(opensSockets)).toEqual(["ws://127.0.0.1:8888"]);
    expect(connectSources(pageConnectPolicy({ pageOrigin: PAGE, serverUrl: "http://localhost:9999/" })).filter(opensSockets)).toEqual(["ws://localhost:9999"]);
  });

  it("with a server over TLS (JupyterHub, with a path), allows wss: to its origin, with its port only when it is not the default", () => {
    expect(kernelSocketSource("https://hub.example.org/user/ada/")).toBe("wss://hub.example.org");
    expect(kernelSocketSource("https://hub.example.org:443/user/ada")).toBe("wss://hub.example.org");
    expect(kernelSocketSource("https://hub.example.org:8443")).toBe("wss://hub.example.org:8443");
    expect(kernelSocketSource("  HTTPS://Hub.Example.ORG/  ")).toBe("wss://hub.example.org");
    expect(kernelSocketSource("http://bücher.example:8000/")).toBe("ws://xn--bcher-kva.example:8000");
  });

  it("lets no WebSocket through for a URL that a source cannot name exactly, and never adds a directive or a wildcard", () => {
    const odd = [
      "not a url",
      "javascript:alert(1)",
      "ftp://files.example/",
      "ws://127.0.0.1:8888",
      "http://[::1]:8888/",
      "http://a;b.example/",
      "http://a%3Bb.example/",
      "http://a,b.example/",
      "http://*.example/",
      "http://x.example:8888; connect-src *",
    ];
    for (const serverUrl of odd) {
      expect(kernelSocketSource(serverUrl), serverUrl).toBeUndefined();
      const sources = connectSources(pageConnectPolicy({ pageOrigin: PAGE, serverUrl }));
      expect(sources.filter(opensSockets), serverUrl).toEqual([]);
    }
  });

  it("in development keeps 'self' (Vite's dev server talks to the page over a WebSocket of its origin)", () => {
    expect(connectSources(pageConnectPolicy({ pageOrigin: "http://localhost:5173", serverUrl: "", dev: true }))[0]).toBe("'self'");
  });
});
