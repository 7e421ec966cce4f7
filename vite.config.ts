/// <reference types="vitest/config" />
import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";
import { pyodideCore, STOCK_STDLIB } from "./vite/pyodide-core.ts";
import { securityHeaders } from "./vite/headers.ts";
import { VitePWA } from "vite-plugin-pwa";

// Test and benchmark builds (`--mode test`) add the runtime harness page; the app's build has none.
export default defineConfig(({ mode }) => ({
  plugins: [
    react(),
    pyodideCore(),
    securityHeaders(),
    // Offline: a Workbox service worker precaches the app and Pyodide's core (see src/sw/sw.ts).
    VitePWA({
      strategies: "injectManifest",
      srcDir: "src/sw",
      filename: "sw.ts",
      registerType: "prompt",
      injectRegister: false,
      manifest: {
        name: "Kiln",
        short_name: "Kiln",
        description: "Run Python in your browser tab, with or without Claude.",
        theme_color: "#c2410c",
        background_color: "#ffffff",
        display: "standalone",
        start_url: ".",
        icons: [
          { src: "icon-192.png", sizes: "192x192", type: "image/png" },
          { src: "icon-512.png", sizes: "512x512", type: "image/png" },
          { src: "icon.svg", sizes: "any", type: "image/svg+xml", purpose: "any" },
        ],
      },
      injectManifest: {
        globPatterns: ["**/*.{html,js,mjs,css,svg,png,json,wasm,zip,webmanifest,woff2}"],
        // Test builds' copy of Pyodide's own standard library, for the benchmark's baselines only.
        globIgnores: ["**/node_modules/**/*", STOCK_STDLIB],
        // Pyodide's WebAssembly and standard library are the big ones (about 10 MB together).
        maximumFileSizeToCacheInBytes: 64 * 1024 * 1024,
        // The plugin asks for the service worker in one file with Rollup's name for it, which
        // Rolldown deprecates: the same, by Rolldown's.
        buildPlugins: { vite: [serviceWorkerInOneFile()] },
      },
      devOptions: { enabled: false },
    }),
  ],
  worker: {
    format: "es",
    rolldownOptions: {
      // Pyodide's JavaScript is bundled into the worker. Its Node-only branches import Node's
      // modules at run time, never reached in a browser. (The build notes Emscripten's `eval`
      // on paths Kiln never takes: the worker's policy has no 'unsafe-eval'.)
      external: [/^node:/],
    },
  },
  server: { cors: { origin: "*" } },
  preview: { cors: { origin: "*" } },
  build: {
    target: "es2022",
    rolldownOptions: {
      input: {
        main: "index.html",
        embed: "embed.html",
        // `embed.js`, at a name that never changes: host pages link to it.
        "embed-script": "src/embed/script.ts",
        ...(mode === "test" ? { harness: "harness.html" } : {}),
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === "embed-script" ? "embed.js" : "assets/[name]-[hash].js"),
        // The editor, React and each SDK in chunks of their own: smaller, cached across releases, and
        // the SDKs loaded only by a request to their provider.
        codeSplitting: {
          groups: [
            { name: "codemirror", test: /node_modules[\\/](@codemirror|@lezer|codemirror|crelt|style-mod|w3c-keyname)/ },
            { name: "react", test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: "anthropic", test: /node_modules[\\/]@anthropic-ai[\\/]/ },
            { name: "openai", test: /node_modules[\\/]openai[\\/]/ },
            { name: "gemini", test: /node_modules[\\/]@google[\\/]genai[\\/]/ },
            // Vite's helper for dynamic imports, which the page needs at once: not in a chunk loaded later.
            { name: "preload", test: /preload-helper/, priority: 10 },
          ],
        },
      },
    },
  },
  test: {
    include: ["src/**/*.test.{ts,tsx}", "workers/**/*.test.ts", "vite/**/*.test.ts", "e2e/fake-anthropic/**/*.test.ts", "e2e/fake-openai/**/*.test.ts", "e2e/fake-gemini/**/*.test.ts", "scripts/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    // A test.only left in would silently skip the rest.
    allowOnly: false,
  },
}));

/** Rolldown's `codeSplitting: false` in place of the deprecated `inlineDynamicImports: true`. */
function serviceWorkerInOneFile(): Plugin {
  return {
    name: "kiln-service-worker-in-one-file",
    config(config) {
      const output = config.build?.rollupOptions?.output;
      if (!output || Array.isArray(output) || !output.inlineDynamicImports) return;
      delete output.inlineDynamicImports;
      Object.assign(output, { codeSplitting: false });
    },
  };
}
