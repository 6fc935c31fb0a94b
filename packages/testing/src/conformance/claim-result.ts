import type { ClaimResult, IdempotencyStore } from '@hookline/core';

/**
 * Why `value` is not one of the three claim answers the receiver understands, or undefined when it
 * is one: `{ state: 'acquired', attempt }` (a positive integer), `{ state: 'in_progress',
 * retryAfterMs }` (a positive finite number) or `{ state: 'completed' }`, with no other own field.
 * The receiver answers anything else as a store error (503), so a store must never return it.
 */
export function claimResultProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `not an object: ${String(value)}`;
  const record = value as Record<string, unknown>;
  const fields = Object.keys(record).sort().join(',');
  switch (record.state) {
    case 'acquired':
      if (fields !== 'attempt,state') return `acquired with the fields ${fields}, expected attempt and state`;
      if (!Number.isInteger(record.attempt) || (record.attempt as number) < 1) return `acquired with attempt ${String(record.attempt)}`;
      return undefined;
    case 'in_progress': {
      if (fields !== 'retryAfterMs,state') return `in_progress with the fields ${fields}, expected retryAfterMs and state`;
      const wait = record.retryAfterMs;
      if (typeof wait !== 'number' || !Number.isFinite(wait) || wait <= 0) return `in_progress with retryAfterMs ${String(wait)}`;
      return undefined;
    }
    case 'completed':
      return fields === 'state' ? undefined : `completed with the fields ${fields}, expected state alone`;
    default:
      return `an unknown state ${JSON.stringify(record.state)}`;
  }
}

/** The store, with every claim's answer checked: a malformed one rejects, naming what is wrong. */
export function checkedClaims(store: IdempotencyStore): IdempotencyStore {
  return {
    async claim(key, token, leaseMs): Promise<ClaimResult> {
      const result = await store.claim(key, token, leaseMs);
      const problem = claimResultProblem(result);
      if (problem !== undefined) throw new Error(`store conformance: claim(${JSON.stringify(key)}) answered ${problem}`);
      return result;
    },
    complete: (key, token, retentionMs) => store.complete(key, token, retentionMs),
    release: (key, token) => store.release(key, token),
    extend: (key, token, leaseMs) => store.extend(key, token, leaseMs),
  };
}
