import { describe, expect, it } from "vitest";
import { networkOffPolicy } from "./network-policy";

/** A policy's directives: name → its source list. */
function directives(policy: string): Map<string, string[]> {
  const parsed = new Map<string, string[]>();
  for (const part of policy.split(";")) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name && !parsed.has(name.toLowerCase())) parsed.set(name.toLowerCase(), sources);
  }
  return parsed;
}

/**
 * Each fetch directive of CSP Level 3 and the directives it falls back to, in order, when a
 * policy does not name it (https://www.w3.org/TR/CSP3/#directive-fallback-list), plus the
 * older ones that browsers still read.
 */
const FALLBACKS: Record<string, string[]> = {
  "default-src": [],
  "connect-src": ["default-src"],
  "font-src": ["default-src"],
  "img-src": ["default-src"],
  "media-src": ["default-src"],
  "manifest-src": ["default-src"],
  "object-src": ["default-src"],
  "prefetch-src": ["default-src"],
  "child-src": ["default-src"],
  "frame-src": ["child-src", "default-src"],
  "fenced-frame-src": ["frame-src", "child-src", "default-src"],
  "worker-src": ["child-src", "script-src", "default-src"],
  "script-src": ["default-src"],
  "script-src-elem": ["script-src", "default-src"],
  "script-src-attr": ["script-src", "default-src"],
  "style-src": ["default-src"],
  "style-src-elem": ["style-src", "default-src"],
  "style-src-attr": ["style-src", "default-src"],
};

/** The sources that apply to `directive` under `policy`. */
function effective(policy: Map<string, string[]>, directive: string): string[] {
  for (const name of [directive, ...FALLBACKS[directive]]) {
    const sources = policy.get(name);
    if (sources) return sources;
  }
  return ["*"];
}

/** Sources whose URLs carry their whole content, or that fetch nothing: no host is reached through them. */
const HOSTLESS = new Set(["'none'", "blob:", "data:", "'wasm-unsafe-eval'"]);

describe("the policy of Python without network", () => {
  const policy = directives(networkOffPolicy());

  it("denies every kind of fetch by default", () => {
    expect(policy.get("default-src")).toEqual(["'none'"]);
  });

  it("lets no fetch directive reach a host: not the app's ('self'), not any scheme or address", () => {
    for (const directive of Object.keys(FALLBACKS)) {
      const sources = effective(policy, directive);
      expect(sources.filter((source) => !HOSTLESS.has(source)), directive).toEqual([]);
    }
  });

  it("allows only what starting a worker needs: a data: worker, its blob: or data: code, WebAssembly", () => {
    expect(effective(policy, "worker-src")).toEqual(["data:"]);
    expect(effective(policy, "script-src")).toEqual(["blob:", "data:", "'wasm-unsafe-eval'"]);
    for (const directive of ["connect-src", "font-src", "img-src", "media-src", "style-src", "frame-src", "object-src", "manifest-src"]) {
      expect(effective(policy, directive), directive).toEqual(["'none'"]);
    }
  });

  it("adds the development server's origin to scripts only, and only when given one", () => {
    const dev = directives(networkOffPolicy("http://localhost:5173"));
    expect(effective(dev, "script-src")).toEqual(["http://localhost:5173", "blob:", "data:", "'wasm-unsafe-eval'"]);
    expect(effective(dev, "connect-src")).toEqual(["'none'"]);
    expect(effective(dev, "worker-src")).toEqual(["data:"]);
  });
});
