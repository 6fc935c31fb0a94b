import { describe, expect, it } from 'vitest';
import { backoffMs, isRetryableStatus, parseRetryAfter, rateLimitWaitMs } from './retry-policy';

describe('the retry policy (docs/service-contract.md §7)', () => {
  it('backs off 1, 2, 4, 8, 16 s, with jitter of at most ±25 %', () => {
    expect([1, 2, 3, 4, 5].map((retry) => backoffMs(retry, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(backoffMs(3, () => 0)).toBe(3000);
    expect(backoffMs(3, () => 0.999999)).toBe(5000);
  });

  it('waits what Retry-After asks on a first 429, and at least the backoff when 429s repeat', () => {
    expect(rateLimitWaitMs(1, 3000, () => 0.5)).toBe(3000);
    expect(rateLimitWaitMs(1, 200, () => 0.5)).toBe(200);
    expect(rateLimitWaitMs(2, 200, () => 0.5)).toBe(2000);
    expect(rateLimitWaitMs(3, 10_000, () => 0.5)).toBe(10_000);
    expect(rateLimitWaitMs(2, undefined, () => 0.5)).toBe(2000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0); // in the past: go now
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });

  it('retries 429 and 5xx only', () => {
    expect([400, 401, 403, 404, 409, 422, 429, 500, 502, 503].filter(isRetryableStatus)).toEqual([429, 500, 502, 503]);
  });
});
