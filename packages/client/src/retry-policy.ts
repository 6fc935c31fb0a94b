/** Service-api.md part 7: 1, 2, 4, 8 s… between tries, at most 5 retries. */
export const DEFAULT_RETRIES = 5;
/** The first backoff step; each further retry doubles it. */
export const BASE_DELAY_MS = 1_000;

/** Why a request is about to be retried. */
export type RetryReason = 'rate-limited' | 'server-error' | 'network-error' | 'timeout';

/**
 * The wait before retry number `retry` (1-based), "1, 2, 4, 8 s…" with ±25 % jitter so that many
 * clients failing together do not come back together. `random` is in [0, 1); 0.5 gives the nominal value.
 */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const nominal = BASE_DELAY_MS * 2 ** (retry - 1);
  return Math.round(nominal * (0.75 + 0.5 * random()));
}

/**
 * The wait after a 429: what `Retry-After` asks for, and when 429s repeat, at least the exponential
 * backoff for this retry (part 7: "wait for the Retry-After header; back off exponentially if it
 * repeats"). Without the header, the backoff alone.
 */
export function rateLimitWaitMs(retry: number, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  const backoff = backoffMs(retry, random);
  if (retryAfterMs === undefined) return backoff;
  return retry === 1 ? retryAfterMs : Math.max(retryAfterMs, backoff);
}

/** `Retry-After` as milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined; // an HTTP date has a day and month name; Date.parse would read "1.5" as a date
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Part 7, rule 1 and 3: only a 429 and 5xx answers are worth another try. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}
