/**
 * Step 3, claim: take the delivery's lease in the store, so exactly one attempt runs its handlers,
 * and say what the store's answer means. The call is bounded by `storeTimeoutMs`; a claim that was
 * acquired after its time limit ran out is released at once (nothing will run under it). Any answer
 * but the three states of the store contract is a store error: running handlers on a state we do not
 * understand could run them twice.
 */
import type { Attempt } from '../attempt';
import type { Awaitable } from '../awaitable';
import { DUPLICATE, type Outcome, waitOutcome } from '../outcome';
import { emit, hasListeners, nextToken, type ReceiverState, reportError } from '../receiver-state';
import { step } from '../step';
import type { ClaimResult } from '../store';
import { callStore } from '../store-call';
import { storeFailure } from '../store-failure';

/**
 * Undefined once the lease is the attempt's (the next step runs the handlers), or the attempt's
 * outcome: a duplicate of a completed delivery, a wait for another attempt's live lease, a store that
 * failed (`unavailable`). Answer-fast mode's receipt claims nothing here: the queue's enqueue is its
 * receipt (step 4b), and the worker claims.
 */
export const claim = step({ call: takeLease, answered: claimed, failed: storeFailed });

function takeLease(state: ReceiverState, attempt: Attempt): Awaitable<ClaimResult> {
  attempt.token = nextToken(state);
  return callStore(attempt, 'claim', state.config.storeTimeoutMs, claimKey, state, releaseLate);
}

function claimKey(state: ReceiverState, attempt: Attempt): Awaitable<ClaimResult> {
  return state.config.store.claim(attempt.key, attempt.token, state.config.leaseMs);
}

function claimed(state: ReceiverState, attempt: Attempt, result: ClaimResult): Outcome | undefined {
  const unknown = unknownClaim(result);
  if (unknown !== undefined) return storeFailed(state, attempt, unknown);
  if (result.state === 'completed') {
    attempt.outcome = 'duplicate';
    if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'completed' });
    return DUPLICATE;
  }
  if (result.state === 'in_progress') {
    attempt.outcome = 'in_progress';
    if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'in_progress' });
    // Not a failure: the delivery waits for the other attempt's lease.
    return waitOutcome(result.retryAfterMs, 'in_progress');
  }
  attempt.claims = result.attempt;
  if (attempt.trace !== undefined) attempt.trace.claims = result.attempt;
  return undefined;
}

/**
 * The store failed (or timed out) before anything ran: fail closed, the service retries (a store that
 * is not set up says so and names the fix, see store-failure.ts).
 */
function storeFailed(state: ReceiverState, attempt: Attempt, error: unknown): Outcome {
  const refusal = storeFailure(state, error, attempt.delivery);
  attempt.error = refusal;
  return { kind: 'unavailable', refusal };
}

/** A claim that answered after its time limit: give an acquired lease back, nothing runs under it. */
function releaseLate(state: ReceiverState, attempt: Attempt, late: ClaimResult): void {
  if (late?.state !== 'acquired') return;
  Promise.resolve()
    .then(() => state.config.store.release(attempt.key, attempt.token))
    .then(undefined, (error: unknown) => reportError(state, error, { phase: 'store', delivery: attempt.delivery }));
}

/** Undefined for an answer of the store contract, or the store error any other answer is. */
function unknownClaim(result: ClaimResult): Error | undefined {
  const state = (result as { state?: unknown } | null)?.state;
  if (state === 'acquired' || state === 'in_progress' || state === 'completed') return undefined;
  return new Error(
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
