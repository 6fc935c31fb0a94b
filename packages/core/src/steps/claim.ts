/**
 * Step 2, claim: take the delivery's lease in the store, so exactly one attempt runs its handlers.
 * The call is bounded by `storeTimeoutMs`; a claim that was acquired after its time limit ran out is
 * released at once (nothing will run under it). Any answer but the three states of the store contract
 * is a store error: running handlers on a state we do not understand could run them twice.
 */
import type { Attempt } from '../attempt';
import { type Awaitable, mapAwaitable } from '../awaitable';
import { nextToken, reportError, type ReceiverState } from '../receiver-state';
import type { ClaimResult } from '../store';
import { callStore } from '../store-call';

export function claim(state: ReceiverState, attempt: Attempt): Awaitable<ClaimResult> {
  const { store, leaseMs, storeTimeoutMs } = state.config;
  const { key } = attempt;
  const token = nextToken(state);
  attempt.token = token;
  const releaseLate = (late: ClaimResult) => {
    if (late?.state !== 'acquired') return;
    Promise.resolve()
      .then(() => store.release(key, token))
      .then(undefined, (error: unknown) => reportError(state, error, { phase: 'store', delivery: attempt.delivery }));
  };
  return mapAwaitable(
    callStore(attempt, 'claim', storeTimeoutMs, () => store.claim(key, token, leaseMs), releaseLate),
    checkClaim,
  );
}

function checkClaim(result: ClaimResult): ClaimResult {
  const state = (result as { state?: unknown } | null)?.state;
  if (state === 'acquired' || state === 'in_progress' || state === 'completed') return result;
  throw new Error(
    `hookline: the store's claim answered ${JSON.stringify(result)}; a store must answer { state: 'acquired' | 'in_progress' | 'completed' } (see the store conformance suite in @hookline/testing)`,
  );
}
