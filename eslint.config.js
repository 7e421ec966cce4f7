import js from "@eslint/js";
import globals from "globals";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

/** The SDKs of model providers, each allowed only in its provider's folder. */
const SDKS = { anthropic: ["@anthropic-ai/sdk"], openai: ["openai"], "openai-compatible": ["openai"], gemini: ["@google/genai"] };

/**
 * The layers: a folder may import only from those below it. model → storage → runtime →
 * execution, chat → providers → features. Each provider's SDK stays in its folder.
 */
function layer(files, forbiddenFolders, allowedSdk) {
  const allowed = new Set(SDKS[allowedSdk] ?? []);
  const sdks = [...new Set(Object.values(SDKS).flat())].filter((sdk) => !allowed.has(sdk));
  return {
    files,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            ...forbiddenFolders.map((folder) => ({
              group: [`**/${folder}/*`, `**/${folder}`],
              message: `This layer may not import from src/${folder}/ (see docs/development.md).`,
            })),
            ...sdks.map((sdk) => ({
              regex: `^${sdk.replace(/[/.]/g, "\\$&")}(/|$)`,
              message: `Only its provider's folder in src/providers/ uses ${sdk}.`,
            })),
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ["dist", "node_modules", "test-results", "playwright-report"] },
  {
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    files: ["**/*.{ts,tsx,js,mjs}"],
    languageOptions: {
      ecmaVersion: 2023,
      globals: { ...globals.browser, ...globals.node },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["src/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  layer(["src/**/*.{ts,tsx}"], [], undefined),
  layer(["src/model/**"], ["storage", "runtime", "execution", "chat", "providers", "features", "embed", "components"], undefined),
  layer(["src/storage/**"], ["runtime", "execution", "chat", "providers", "features", "embed", "components"], undefined),
  layer(["src/runtime/**"], ["execution", "chat", "providers", "features", "embed", "components"], undefined),
  layer(["src/execution/**", "src/chat/**"], ["providers", "features", "embed", "components"], undefined),
  layer(["src/providers/anthropic/**"], ["features", "embed", "components"], "anthropic"),
  layer(["src/providers/openai-compatible/**"], ["features", "embed", "components"], "openai-compatible"),
  layer(["src/providers/openai/**"], ["features", "embed", "components"], "openai"),
  layer(["src/providers/gemini/**"], ["features", "embed", "components"], "gemini"),
);
