import { createReadStream, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Plugin } from "vite";
import { isolationHeaders } from "./headers.ts";

/** The files of Pyodide's core that the app serves from its own origin under `/pyodide/`. */
export const PYODIDE_CORE_FILES = [
  "pyodide.mjs",
  "pyodide.asm.mjs",
  "pyodide.asm.wasm",
  "python_stdlib.zip",
  "pyodide-lock.json",
] as const;

const CONTENT_TYPES: Record<string, string> = {
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".zip": "application/zip",
  ".json": "application/json",
};

export function pyodideDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve("pyodide/package.json"));
}

/**
 * Serves Pyodide's core from the pinned npm package at `/pyodide/` in dev, and copies it
 * into the build, so no CDN is needed to start Python.
 */
export function pyodideCore(): Plugin {
  const dir = pyodideDir();
  return {
    name: "kiln-pyodide-core",
    configureServer(server) {
      server.middlewares.use("/pyodide/", (req, res, next) => {
        const name = decodeURIComponent((req.url ?? "").split("?")[0]).replace(/^\//, "");
        if (!(PYODIDE_CORE_FILES as readonly string[]).includes(name)) return next();
        const file = path.join(dir, name);
        res.setHeader("Content-Type", CONTENT_TYPES[path.extname(name)] ?? "application/octet-stream");
        res.setHeader("Content-Length", statSync(file).size);
        for (const [key, value] of Object.entries(isolationHeaders)) res.setHeader(key, value);
        createReadStream(file).pipe(res);
      });
    },
    generateBundle() {
      for (const name of PYODIDE_CORE_FILES) {
        this.emitFile({
          type: "asset",
          fileName: `pyodide/${name}`,
          source: readFileSync(path.join(dir, name)),
        });
      }
    },
  };
}
