/**
 * Step 3, claim: take the delivery's lease in the store, so exactly one attempt runs its handlers,
 * and say what the store's answer means. The call is bounded by `storeTimeoutMs`; a claim that was
 * acquired after its time limit ran out is released at once (nothing will run under it). Any answer
 * but the three states of the store contract is a store error: running handlers on a state we do not
 * understand could run them twice.
 */
import * as answers from '../answers';
import type { Attempt } from '../attempt';
import { type Awaitable, isPromiseLike, mapAwaitable, thenStep } from '../awaitable';
import { emit, hasListeners, nextToken, type ReceiverState, reportError } from '../receiver-state';
import type { ClaimResult } from '../store';
import { boundStoreCall, storeCallStart } from '../store-call';
import { storeFailure } from '../store-failure';
import { answerError } from './answer-error';
import { waitRefusal } from './guard-refusals';

/**
 * Undefined once the lease is the attempt's (the next step runs the handlers, or enqueues), or the
 * attempt's answer: a duplicate of a completed delivery (200), another attempt's live lease (409), a
 * store that failed (503, or 500 for a key it refused). Answer-fast mode's receipt claims nothing here:
 * the queue's enqueue is its receipt (step 4b), and the worker claims.
 */
export function claim(state: ReceiverState, attempt: Attempt): Awaitable<answers.ReceiverAnswer | undefined> {
  return thenStep(state, attempt, takeLease, claimed, storeFailed);
}

function takeLease(state: ReceiverState, attempt: Attempt): Awaitable<ClaimResult> {
  const { store, leaseMs, storeTimeoutMs } = state.config;
  attempt.token = nextToken(state);
  const startedAt = storeCallStart(attempt);
  const result = store.claim(attempt.key, attempt.token, leaseMs);
  if (!isPromiseLike(result) && startedAt < 0) return checkClaim(result);
  const bounded = boundStoreCall(attempt, 'claim', startedAt, storeTimeoutMs, result, (late) => releaseLate(state, attempt, late));
  return mapAwaitable(bounded, checkClaim);
}

function claimed(state: ReceiverState, attempt: Attempt, result: ClaimResult): Awaitable<answers.ReceiverAnswer> | undefined {
  if (result.state === 'completed') {
    attempt.outcome = 'duplicate';
    if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'completed' });
    return answers.duplicateAnswer();
  }
  if (result.state === 'in_progress') {
    attempt.outcome = 'in_progress';
    if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'in_progress' });
    // Marked as a guard's wait: a queue worker waits for the other attempt without spending a try.
    attempt.error = waitRefusal(result.retryAfterMs, 'in_progress');
    return answerError(state, attempt.error, attempt, attempt.trace);
  }
  attempt.claims = result.attempt;
  if (attempt.trace !== undefined) attempt.trace.claims = result.attempt;
  return undefined;
}

/**
 * The store failed (or timed out) before anything ran: fail closed, the service retries (a store that
 * is not set up: 500, see store-failure.ts). The refusal is the attempt's error, which a worker names.
 */
function storeFailed(state: ReceiverState, attempt: Attempt, error: unknown): answers.ReceiverAnswer {
  attempt.error = storeFailure(state, error, attempt.delivery);
  return answerError(state, attempt.error, attempt, attempt.trace);
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
