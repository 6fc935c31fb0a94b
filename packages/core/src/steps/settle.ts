/**
 * Step 5, settle: record the handlers' outcome in the store (complete on success, release on failure
 * so the next attempt runs them again: record.ts), then fire the hooks and give the answer. A guard's
 * refusal is recognised by the guard's own mark (guard-refusals.ts), never by its code: a handler may
 * throw a HooklineError('CONFLICT') of its own, and that is a failure like any other.
 */
import * as answers from '../answers';
import type { Attempt } from '../attempt';
import type { Awaitable } from '../awaitable';
import { PermanentFailure } from '../errors';
import type { HandlerOutcome } from '../in-flight';
import { reportPermanentFailure } from '../permanent-notes';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import { answerError } from './answer-error';
import { guardRefusal } from './guard-refusals';
import { record } from './record';

export function settle(state: ReceiverState, attempt: Attempt, outcome: HandlerOutcome): Awaitable<answers.ReceiverAnswer> {
  const recorded = record(state, attempt, outcome);
  if (recorded === undefined) return conclude(state, attempt, outcome);
  return recorded.then(() => conclude(state, attempt, outcome));
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
  if (permanent) reportPermanentFailure(state, attempt, error);
  else reportError(state, error, { phase: 'handler', delivery });
  if (hasListeners(state, 'failed')) emit(state, 'failed', { delivery, context, error, permanent });
  if (permanent) return answers.permanentFailureAnswer();
  // A guard whose key or version function gave something unusable answers as the configuration error it is.
  const answer = refusal === undefined ? answers.handlerFailed(delivery.event, error) : error;
  return answerError(state, answer, attempt, attempt.trace);
}
