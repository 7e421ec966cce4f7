import DOMPurify, { type Config, type DOMPurify as Purifier } from "dompurify";

/**
 * A sanitizer with a DOMPurify instance of its own (so its hook applies to nothing else),
 * made on first use. Where DOMPurify cannot run (no DOM) it returns "", never the input.
 */
export function hookedSanitizer(config: Config, afterSanitizeAttributes: (node: Element) => void): (html: string) => string {
  let purifier: Purifier | undefined;
  return (html) => {
    if (!purifier) {
      purifier = DOMPurify(window);
      purifier.addHook("afterSanitizeAttributes", afterSanitizeAttributes);
    }
    return purifier.isSupported ? purifier.sanitize(html, config) : "";
  };
}
