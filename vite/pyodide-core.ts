import { createReadStream, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "vite";
import { isolationHeaders } from "./headers.ts";
import { stdlibWithBytecode } from "./stdlib-bytecode.ts";

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
 * Where test builds (`--mode test`) also serve the npm package's own standard library, without
 * bytecode: the benchmark's bare `loadPyodide()` baselines load it (`stdLibURL`), so that they
 * are Pyodide as it comes.
 */
export const STOCK_STDLIB = "pyodide/stock/python_stdlib.zip";

/**
 * Serves Pyodide's core from the pinned npm package at `/pyodide/` in dev, and copies it
 * into the build, so no CDN is needed to start Python. Its standard library is served with
 * bytecode (see stdlib-bytecode.ts).
 */
export function pyodideCore(): Plugin {
  const dir = pyodideDir();
  const root = fileURLToPath(new URL("..", import.meta.url));
  const stdlib = () => stdlibWithBytecode(dir, path.join(root, "workers/python/kiln"), path.join(root, "node_modules/.cache/kiln"));
  let testBuild = false;
  return {
    name: "kiln-pyodide-core",
    configResolved(config) {
      testBuild = config.mode === "test";
    },
    configureServer(server) {
      server.middlewares.use("/pyodide/", (req, res, next) => {
        const name = decodeURIComponent((req.url ?? "").split("?")[0]).replace(/^\//, "");
        const stock = `pyodide/${name}` === STOCK_STDLIB;
        if (!stock && !(PYODIDE_CORE_FILES as readonly string[]).includes(name)) return next();
        res.setHeader("Content-Type", CONTENT_TYPES[path.extname(name)] ?? "application/octet-stream");
        for (const [key, value] of Object.entries(isolationHeaders)) res.setHeader(key, value);
        if (name === "python_stdlib.zip") {
          stdlib().then((bytes) => res.end(bytes), next);
          return;
        }
        const file = path.join(dir, stock ? "python_stdlib.zip" : name);
        res.setHeader("Content-Length", statSync(file).size);
        createReadStream(file).pipe(res);
      });
    },
    async generateBundle() {
      for (const name of PYODIDE_CORE_FILES) {
        this.emitFile({
          type: "asset",
          fileName: `pyodide/${name}`,
          source: name === "python_stdlib.zip" ? await stdlib() : readFileSync(path.join(dir, name)),
        });
      }
      if (testBuild) this.emitFile({ type: "asset", fileName: STOCK_STDLIB, source: readFileSync(path.join(dir, "python_stdlib.zip")) });
    },
  };
}
