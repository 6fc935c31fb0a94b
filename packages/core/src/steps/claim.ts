/**
 * Step 2, claim: take the delivery's lease in the store, so exactly one attempt runs its handlers.
 * The call is bounded by `storeTimeoutMs`; a claim that was acquired after its time limit ran out is
 * released at once (nothing will run under it). Any answer but the three states of the store contract
 * is a store error: running handlers on a state we do not understand could run them twice.
 */
import type { Attempt } from '../attempt';
import { type Awaitable, isPromiseLike, mapAwaitable } from '../awaitable';
import { nextToken, type ReceiverState, reportError } from '../receiver-state';
import type { ClaimResult } from '../store';
import { boundStoreCall, storeCallStart } from '../store-call';

export function claim(state: ReceiverState, attempt: Attempt): Awaitable<ClaimResult> {
  const { store, leaseMs, storeTimeoutMs } = state.config;
  attempt.token = nextToken(state);
  const startedAt = storeCallStart(attempt);
  const result = store.claim(attempt.key, attempt.token, leaseMs);
  if (!isPromiseLike(result) && startedAt < 0) return checkClaim(result);
  const bounded = boundStoreCall(attempt, 'claim', startedAt, storeTimeoutMs, result, (late) => releaseLate(state, attempt, late));
  return mapAwaitable(bounded, checkClaim);
}

/** A claim that answered after its time limit: give an acquired lease back, nothing runs under it. */
function releaseLate(state: ReceiverState, attempt: Attempt, late: ClaimResult): void {
  if (late?.state !== 'acquired') return;
  Promise.resolve()
    .then(() => state.config.store.release(attempt.key, attempt.token))
    .then(undefined, (error: unknown) => reportError(state, error, { phase: 'store', delivery: attempt.delivery }));
}

function checkClaim(result: ClaimResult): ClaimResult {
  const state = (result as { state?: unknown } | null)?.state;
  if (state === 'acquired' || state === 'in_progress' || state === 'completed') return result;
  throw new Error(
    `hookline: the store's claim answered ${describe(result)}; a store must answer { state: 'acquired' | 'in_progress' | 'completed' } (see the store conformance suite, @hookline/testing/conformance)`,
  );
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
