/**
 * Answering an error: a refusal (a HooklineError) or any other error (a 500) becomes the answer
 * (`errorAnswer`, answers.ts), and whoever listens hears of a refusal: the `rejected` hook, the
 * logger's warn line (or, without a logger, the refusal notes on `console.warn`), the delivery's
 * trace. Every error the receiver and the adapters answer goes through here (adapters through
 * `receiver.answerError`). The names: `refuse()` builds a refusal, `errorAnswer()` is its answer
 * alone, `answerError()` answers it and tells the listeners; `answerOutcome()` does so for the outcome
 * the steps ended a delivery with (outcome.ts), and `reportOutcome()` tells the listeners of one that
 * nobody is answered for (a queue worker's job, handlers that ended after the answer).
 */
import { acceptedAnswer, errorAnswer, type ReceiverAnswer, refusalOf } from './answers';
import type { Attempt } from './attempt';
import type { DeliveryTrace } from './delivery-trace';
import { traceRefusal } from './diagnostics';
import { HooklineError } from './errors';
import type { Outcome } from './outcome';
import { emit, hasListeners, type ReceiverState } from './receiver-state';
import { callUserCode } from './user-code';

export function answerError(
  state: ReceiverState,
  error: unknown,
  attempt: Attempt | undefined,
  trace: DeliveryTrace | undefined,
): ReceiverAnswer {
  const answer = errorAnswer(error);
  if (!HooklineError.is(error)) return answer;
  if (attempt !== undefined && attempt.outcome === undefined) attempt.outcome = 'rejected';
  if (trace !== undefined) traceRefusal(trace, error.code, error.details);
  if (hasListeners(state, 'rejected')) {
    emit(state, 'rejected', { status: answer.status, code: error.code, message: error.message, details: error.details });
  }
  const { logger } = state.config;
  if (state.refusalNotes !== undefined && !state.reported.has(error)) {
    state.refusalNotes.hear(error, answer.status, {
      event: attempt?.delivery.event ?? trace?.event,
      deliveryId: attempt?.delivery.deliveryId ?? trace?.deliveryId,
    });
  } else if (logger !== undefined) {
    const fields = {
      status: answer.status,
      code: error.code,
      details: error.details,
      event: attempt?.delivery.event ?? trace?.event,
      deliveryId: attempt?.delivery.deliveryId ?? trace?.deliveryId,
    };
    callUserCode(state, "the logger's warn()", () =>
      logger.warn(fields, `hookline: refused with ${answer.status} ${error.code}: ${error.message}`),
    );
  }
  return answer;
}

/** The receipt's answer to the outcome the steps ended the delivery with: a 2xx, or its refusal, told to the listeners. */
export function answerOutcome(state: ReceiverState, attempt: Attempt, outcome: Outcome): ReceiverAnswer {
  const refusal = refusalOf(outcome, attempt.delivery.event);
  return refusal === undefined ? acceptedAnswer(outcome) : answerError(state, refusal, attempt, attempt.trace);
}

/**
 * Tells the listeners of an outcome nobody is answered for: a queue worker's job, or handlers that
 * ended after the receipt's answer. A worker's job that must wait is not refused (it waits without
 * spending a try): only its trace hears of it, neither the `rejected` hook nor the logger.
 */
export function reportOutcome(state: ReceiverState, attempt: Attempt, outcome: Outcome): void {
  const refusal = refusalOf(outcome, attempt.delivery.event);
  if (refusal === undefined) return;
  if (outcome.kind === 'wait' && attempt.mode === 'work') {
    if (attempt.trace !== undefined) traceRefusal(attempt.trace, refusal.code, refusal.details);
    return;
  }
  answerError(state, refusal, attempt, attempt.trace);
}
