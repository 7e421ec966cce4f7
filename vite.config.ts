/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { pyodideCore } from "./vite/pyodide-core.ts";
import { isolationHeaders } from "./vite/headers.ts";

export default defineConfig({
  plugins: [react(), pyodideCore()],
  worker: { format: "es" },
  server: { headers: isolationHeaders, cors: { origin: "*" } },
  preview: { headers: isolationHeaders, cors: { origin: "*" } },
  build: {
    target: "es2022",
    rollupOptions: {
      input: { main: "index.html", harness: "harness.html" },
    },
  },
  test: {
    include: ["src/**/*.test.{ts,tsx}", "workers/**/*.test.ts", "vite/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
  },
});
