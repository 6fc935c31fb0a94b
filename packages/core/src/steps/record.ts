/**
 * The delivery's record, at the end of an attempt: completed (kept for the retention, longer when the
 * body's timestamp needs it: retention.ts) or released so that the next attempt runs the handlers
 * again. Settle (step 5) records the handlers' outcome here, on receipt in synchronous mode and in a
 * worker; answer-fast mode's receipt records nothing (the queue's idempotent enqueue is its receipt,
 * step 4b). A store error here goes to `onError`: the outcome stays what the handlers earned.
 */
import type { Attempt } from '../attempt';
import type { Awaitable } from '../awaitable';
import { type ReceiverState, reportError } from '../receiver-state';
import { completionRetentionMs } from '../retention';
import { callStore } from '../store-call';

/** Completes the record after a success, or releases it after a failure: whether the attempt still owned it. */
export function recordOutcome(state: ReceiverState, attempt: Attempt): Awaitable<boolean> {
  const outcome = attempt.handlersOutcome;
  const record = outcome === undefined ? completeRecord : releaseRecord;
  return record(state, attempt);
}

function completeRecord(state: ReceiverState, attempt: Attempt): Awaitable<boolean> {
  return callStore(attempt, 'complete', state.config.storeTimeoutMs, completeKey, state);
}

function releaseRecord(state: ReceiverState, attempt: Attempt): Awaitable<boolean> {
  return callStore(attempt, 'release', state.config.storeTimeoutMs, releaseKey, state);
}

function completeKey(state: ReceiverState, attempt: Attempt): Awaitable<boolean> {
  return state.config.store.complete(attempt.key, attempt.token, completionRetentionMs(state, attempt));
}

function releaseKey(state: ReceiverState, attempt: Attempt): Awaitable<boolean> {
  return state.config.store.release(attempt.key, attempt.token);
}

/** The record's store call failed: reported, and the attempt ends as its handlers did. */
export function recordFailed(state: ReceiverState, attempt: Attempt, error: unknown): void {
  reportError(state, error, { phase: 'store', delivery: attempt.delivery });
}

/** The record was no longer the attempt's: reported, and the attempt ends as its handlers did. */
export function checkOwned(state: ReceiverState, attempt: Attempt, owned: boolean): void {
  if (owned) return;
  reportError(
    state,
    new Error(
      `hookline: the lease on ${attempt.delivery.deliveryId} was lost before the handlers finished (another attempt may have run them)`,
    ),
    { phase: 'store', delivery: attempt.delivery },
  );
}
