/**
 * Turns a refusal (a HooklineError, or any error: a 500) into the answer, and tells whoever listens:
 * the `rejected` hook, the logger's warn line (or, without a logger, the refusal notes on
 * `console.warn`), the delivery's trace. Every refusal the receiver and the
 * adapters give goes through here (adapters through `receiver.answerError`).
 */
import { errorAnswer, type ReceiverAnswer } from '../answers';
import type { Attempt } from '../attempt';
import { type DeliveryTrace, traceRefusal } from '../diagnostics';
import { HooklineError } from '../errors';
import { emit, hasListeners, type ReceiverState } from '../receiver-state';

export function answerRefusal(
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
    logger.warn(
      {
        status: answer.status,
        code: error.code,
        details: error.details,
        event: attempt?.delivery.event ?? trace?.event,
        deliveryId: attempt?.delivery.deliveryId ?? trace?.deliveryId,
      },
      `hookline: refused with ${answer.status} ${error.code}: ${error.message}`,
    );
  }
  return answer;
}
