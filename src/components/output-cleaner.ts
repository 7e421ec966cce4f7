import type { OutputCleaner } from "../chat/export";
import { hookedSanitizer } from "./sanitizer";

/** DOMPurify's defaults (no script, handler or `javascript:` link), and no forms. */
const html = hookedSanitizer({ FORBID_TAGS: ["form"] }, () => undefined);
const svg = hookedSanitizer({ USE_PROFILES: { svg: true, svgFilters: true } }, () => undefined);

/** Python's rich outputs as an exported notebook carries them (see src/chat/export.ts). */
export const notebookCleaner: OutputCleaner = { html, svg };
