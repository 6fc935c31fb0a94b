/**
 * Step 5, settle: record the handlers' outcome in the store (complete on success, release on failure
 * so the next attempt runs them again: record.ts), then fire the hooks and end the attempt with its
 * outcome. A guard that stopped a handler is recognised by the guard's own mark (guard-refusals.ts),
 * never by a code: a handler may throw a HooklineError('CONFLICT') of its own, and that is a failure
 * like any other.
 */
import type { Attempt } from '../attempt';
import { PermanentFailure } from '../errors';
import type { HandlerOutcome } from '../in-flight';
import { DONE, type Outcome } from '../outcome';
import { reportPermanentFailure } from '../permanent-notes';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import { step } from '../step';
import { guardOutcome } from './guard-refusals';
import { checkOwned, recordFailed, recordOutcome } from './record';

export const settle = step({
  call: recordOutcome,
  answered(state, attempt, owned) {
    checkOwned(state, attempt, owned);
    return conclude(state, attempt, attempt.handlersOutcome);
  },
  failed(state, attempt, error) {
    recordFailed(state, attempt, error);
    return conclude(state, attempt, attempt.handlersOutcome);
  },
});

function conclude(state: ReceiverState, attempt: Attempt, outcome: HandlerOutcome): Outcome {
  const { delivery } = attempt;
  const context = attempt.context as NonNullable<Attempt['context']>;
  if (outcome === undefined) {
    attempt.outcome = 'handled';
    if (hasListeners(state, 'handled')) emit(state, 'handled', { delivery, context, durationMs: Date.now() - attempt.startedAt });
    return DONE;
  }
  const { error } = outcome;
  const stopped = guardOutcome(error);
  attempt.error = error;
  if (stopped !== undefined && stopped.kind !== 'misconfigured') {
    // A guard could not run a handler yet (a busy resource, an early delivery) or its store call
    // failed: the handler did not fail, the delivery is tried again.
    attempt.outcome = 'failed';
    return stopped;
  }
  const permanent = PermanentFailure.is(error);
  attempt.outcome = permanent ? 'permanent' : 'failed';
  if (permanent) reportPermanentFailure(state, attempt, error);
  else reportError(state, error, { phase: 'handler', delivery });
  if (hasListeners(state, 'failed')) emit(state, 'failed', { delivery, context, error, permanent });
  if (permanent) return { kind: 'permanent', error };
  // A guard whose key or version function gave something unusable ends as the configuration error it is.
  return stopped ?? { kind: 'failed', error };
}
