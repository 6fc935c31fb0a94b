/**
 * The delivery's record, at the end of an attempt: completed (kept for the retention, longer when the
 * body's timestamp needs it) or released so that the next attempt runs the handlers again. Settle
 * (step 5) records the handlers' outcome, on receipt in synchronous mode and in a worker; answer-fast
 * mode's receipt records nothing (the queue's idempotent enqueue is its receipt, step 4b). A guarded
 * handler's own record is kept for as long (step 4a). A store error here goes to `onError`: the answer
 * stays what the handlers earned.
 */
import type { Attempt } from '../attempt';
import { type Awaitable, thenStep } from '../awaitable';
import type { HandlerOutcome } from '../in-flight';
import { type ReceiverState, reportError } from '../receiver-state';
import { boundStoreCall, storeCallStart } from '../store-call';

/** Clock drift allowed between this process and the store when a completion must outlive the replay window. */
const CLOCK_MARGIN_MS = 60_000;

/**
 * How long a completion is kept: the retention, or longer when the body's timestamp is recent enough
 * (up to the future skew) that a replay would still pass the freshness check after the retention ran
 * out. Measured from the receipt, not from now: the store counts from a later instant, so the record
 * only lives longer, and no clock is read.
 */
export function completionRetentionMs(state: ReceiverState, attempt: Attempt): number {
  const { retentionMs, maxAgeMs } = state.config;
  return Math.max(retentionMs, attempt.timestampMs + maxAgeMs - attempt.receivedAt + CLOCK_MARGIN_MS);
}

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
