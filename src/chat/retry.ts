import { ProviderError } from "./provider";

const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000];

/**
 * `attempt()` again after a rate limit, an overload or a server error that streamed nothing,
 * waiting as the server asked (`retry-after`) or with backoff; `onRetry` hears of each wait.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  signal: AbortSignal,
  onRetry: (event: { attempt: number; delayMs: number; reason: string }) => void,
): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (cause) {
      const error = cause instanceof ProviderError ? cause : new ProviderError(String(cause), "network");
      const retriable = (error.kind === "rate" || error.kind === "overloaded" || error.kind === "server") && !error.partial.length;
      if (!retriable || tries >= RETRY_DELAYS_MS.length || signal.aborted) throw error;
      const asked = error.retryAfterSeconds;
      const delayMs = asked !== undefined && Number.isFinite(asked) && asked >= 0 ? asked * 1000 : RETRY_DELAYS_MS[tries];
      onRetry({ attempt: tries + 1, delayMs, reason: error.message });
      await sleep(delayMs, signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new ProviderError("Stopped.", "aborted"));
    });
  });
}

/** The `retry-after` header of a failed response, in seconds. */
export function retryAfter(headers: Headers | undefined): number | undefined {
  const value = headers?.get?.("retry-after");
  const seconds = value ? Number(value) : NaN;
  return Number.isFinite(seconds) ? seconds : undefined;
}
