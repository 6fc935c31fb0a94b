/**
 * The delivery's record, at the end of an attempt: completed (kept for the retention, longer when the
 * body's timestamp needs it: retention.ts) or released so that the next attempt runs the handlers
 * again. Settle (step 5) records the handlers' outcome here. A store error here goes to `onError`:
 * the answer stays what the handlers earned.
 */
import type { Attempt } from '../attempt';
import { type Awaitable, thenStep } from '../awaitable';
import type { HandlerOutcome } from '../in-flight';
import { type ReceiverState, reportError } from '../receiver-state';
import { completionRetentionMs } from '../retention';
import { boundStoreCall, storeCallStart } from '../store-call';

/** Completes or releases the record; synchronous when the store answers at once. */
export function record(state: ReceiverState, attempt: Attempt, outcome: HandlerOutcome): void | Promise<void> {
  return thenStep(state, attempt, outcome === undefined ? completeRecord : releaseRecord, checkOwned, recordFailed);
}

function completeRecord(state: ReceiverState, attempt: Attempt): Awaitable<boolean> {
  const startedAt = storeCallStart(attempt);
  const owned = state.config.store.complete(attempt.key, attempt.token, completionRetentionMs(state, attempt));
  return boundStoreCall(attempt, 'complete', startedAt, state.config.storeTimeoutMs, owned);
}

function releaseRecord(state: ReceiverState, attempt: Attempt): Awaitable<boolean> {
  const startedAt = storeCallStart(attempt);
  const owned = state.config.store.release(attempt.key, attempt.token);
  return boundStoreCall(attempt, 'release', startedAt, state.config.storeTimeoutMs, owned);
}

function recordFailed(state: ReceiverState, attempt: Attempt, error: unknown): void {
  reportError(state, error, { phase: 'store', delivery: attempt.delivery });
}

function checkOwned(state: ReceiverState, attempt: Attempt, owned: boolean): void {
  if (owned) return;
  reportError(
    state,
    new Error(
      `hookline: the lease on ${attempt.delivery.deliveryId} was lost before the handlers finished (another attempt may have run them)`,
    ),
    { phase: 'store', delivery: attempt.delivery },
  );
}
