/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { pyodideCore } from "./vite/pyodide-core.ts";
import { embedIsolation, isolationHeaders } from "./vite/headers.ts";

export default defineConfig({
  plugins: [react(), pyodideCore(), embedIsolation()],
  worker: { format: "es" },
  server: { headers: isolationHeaders, cors: { origin: "*" } },
  preview: { headers: isolationHeaders, cors: { origin: "*" } },
  build: {
    target: "es2022",
    rolldownOptions: {
      input: { main: "index.html", harness: "harness.html", embed: "embed.html" },
      output: {
        // The editor, React and the SDK in chunks of their own: smaller, and cached across releases.
        codeSplitting: {
          groups: [
            { name: "codemirror", test: /node_modules[\\/](@codemirror|@lezer|codemirror|crelt|style-mod|w3c-keyname)/ },
            { name: "react", test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: "anthropic", test: /node_modules[\\/]@anthropic-ai[\\/]/ },
          ],
        },
      },
    },
  },
  test: {
    include: ["src/**/*.test.{ts,tsx}", "workers/**/*.test.ts", "vite/**/*.test.ts", "e2e/fake-anthropic/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
  },
});
