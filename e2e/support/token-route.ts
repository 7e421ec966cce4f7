/** The secret-token path prefix that the stand-in API servers answer under. */
import { timingSafeEqual } from "node:crypto";

/**
 * A request's URL with the path after `/<token>` (`/<token>/v1/messages?x` → `/v1/messages?x`), or null when
 * its path does not start with `/<token>/` (or the request target does not parse).
 */
export function routedUrl(target: string, token: Buffer): URL | null {
  let url: URL;
  try {
    url = new URL(target, "http://localhost");
  } catch {
    return null;
  }
  const end = url.pathname.indexOf("/", 1);
  if (end < 0) return null;
  const given = Buffer.from(url.pathname.slice(1, end), "utf8");
  // timingSafeEqual needs equal lengths; the length of the token is no secret.
  if (given.length !== token.length || !timingSafeEqual(given, token)) return null;
  url.pathname = url.pathname.slice(end);
  return url;
}
