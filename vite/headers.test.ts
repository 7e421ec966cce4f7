import { describe, expect, it } from "vitest";
import { appHeaders, embedHeaders } from "./headers";
import { pageConnectPolicy } from "../src/host/page-policy";

/** The sources of `directive` in `policy`. */
function sources(policy: string, directive: string): string[] {
  for (const part of policy.split(";")) {
    const [name, ...list] = part.trim().split(/\s+/);
    if (name === directive) return list;
  }
  throw new Error(`${directive} is not in the policy`);
}

/** Whether the header's `connect-src` source `allowed` covers everything `source` of the page's narrowed policy matches. */
function covers(allowed: string, source: string, pageOrigin: string): boolean {
  if (allowed === source) return true;
  if (allowed === "'self'") return source === pageOrigin;
  if (/^[a-z]+:$/.test(allowed)) return source.startsWith(`${allowed}//`);
  const wildcardPort = allowed.match(/^([a-z]+:\/\/[^:/]+):\*$/);
  return !!wildcardPort && new RegExp(`^${wildcardPort[1].replace(/\./g, "\\.")}:\\d+$`).test(source);
}

describe("the pages' connect-src headers", () => {
  const app = sources(appHeaders["Content-Security-Policy"], "connect-src");

  it("the app's allows a kernel's WebSocket on any origin a person might set (the page narrows it at run time)", () => {
    expect(app).toEqual(expect.arrayContaining(["ws://localhost:*", "ws://127.0.0.1:*", "wss:"]));
  });

  it("the page's narrowed policy names nothing that the app's header does not allow", () => {
    const pageOrigin = "http://192.168.1.20:8080";
    for (const serverUrl of ["", "http://localhost:8888", "http://127.0.0.1:8888/", "https://hub.example.org/user/ada/", "https://jupyter.example:8443"]) {
      for (const source of sources(pageConnectPolicy({ pageOrigin, serverUrl }), "connect-src")) {
        expect(
          app.some((allowed) => covers(allowed, source, pageOrigin)),
          `${source} (server ${serverUrl || "none"})`,
        ).toBe(true);
      }
    }
  });

  it("the widget's page, which talks to no Jupyter server, allows no WebSocket but its own origin's", () => {
    const embed = sources(embedHeaders["Content-Security-Policy"], "connect-src");
    expect(embed.filter((source) => /^wss?:/.test(source) || source === "*")).toEqual([]);
    expect(embed).toEqual(["'self'", "https:", "http://localhost:*", "http://127.0.0.1:*"]);
  });
});
