/**
 * Step 4, settle: record the handlers' outcome in the store (complete on success, release on failure
 * so the next attempt runs them again), then fire the hooks and give the answer. A store error here
 * goes to `onError`: the answer stays what the handlers earned.
 */
import * as answers from '../answers';
import type { Attempt } from '../attempt';
import { type Awaitable, isPromiseLike } from '../awaitable';
import { PermanentFailure } from '../errors';
import { guardRefusal } from './guard-refusals';
import type { HandlerOutcome } from '../in-flight';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import { boundStoreCall, storeCallStart } from '../store-call';
import { answerError } from './answer-error';

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

export function settle(state: ReceiverState, attempt: Attempt, outcome: HandlerOutcome): Awaitable<answers.ReceiverAnswer> {
  const recorded = record(state, attempt, outcome);
  if (recorded === undefined) return conclude(state, attempt, outcome);
  return recorded.then(() => conclude(state, attempt, outcome));
}

/** Completes or releases the record; synchronous when the store answers at once. */
export function record(state: ReceiverState, attempt: Attempt, outcome: HandlerOutcome): void | Promise<void> {
  const { store, storeTimeoutMs } = state.config;
  const operation = outcome === undefined ? 'complete' : 'release';
  const startedAt = storeCallStart(attempt);
  let owned: Awaitable<boolean>;
  try {
    owned =
      outcome === undefined
        ? store.complete(attempt.key, attempt.token, completionRetentionMs(state, attempt))
        : store.release(attempt.key, attempt.token);
    owned = boundStoreCall(attempt, operation, startedAt, storeTimeoutMs, owned);
  } catch (error) {
    reportError(state, error, { phase: 'store', delivery: attempt.delivery });
    return;
  }
  if (!isPromiseLike(owned)) return checkOwned(state, attempt, owned);
  return owned.then(
    (value) => checkOwned(state, attempt, value),
    (error: unknown) => reportError(state, error, { phase: 'store', delivery: attempt.delivery }),
  );
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

function conclude(state: ReceiverState, attempt: Attempt, outcome: HandlerOutcome): answers.ReceiverAnswer {
  const { delivery } = attempt;
  const context = attempt.context as NonNullable<Attempt['context']>;
  if (outcome === undefined) {
    attempt.outcome = 'handled';
    if (hasListeners(state, 'handled')) emit(state, 'handled', { delivery, context, durationMs: Date.now() - attempt.startedAt });
    return answers.handledAnswer();
  }
  const { error } = outcome;
  const refusal = guardRefusal(error);
  if (refusal !== undefined && refusal.kind !== 'misconfigured') {
    // A guard could not run a handler yet (a busy resource, an early delivery: 409) or its store call
    // failed (503): the handler did not fail, the service retries. (Recognised by the guard's own
    // mark, never by the code: a handler may throw a HooklineError('CONFLICT') of its own.)
    attempt.outcome = 'failed';
    attempt.error = error;
    return answerError(state, error, attempt, attempt.trace);
  }
  const permanent = PermanentFailure.is(error);
  attempt.outcome = permanent ? 'permanent' : 'failed';
  attempt.error = error;
  if (!permanent) reportError(state, error, { phase: 'handler', delivery });
  if (hasListeners(state, 'failed')) emit(state, 'failed', { delivery, context, error, permanent });
  if (permanent) return answers.permanentFailureAnswer();
  // A guard whose key or version function gave something unusable answers as the configuration error it is.
  const answer = refusal === undefined ? answers.handlerFailed(delivery.event, error) : error;
  return answerError(state, answer, attempt, attempt.trace);
}
