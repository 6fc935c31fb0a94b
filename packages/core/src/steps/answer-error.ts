/**
 * Answering an error: a refusal (a HooklineError) or any other error (a 500) becomes the answer
 * (`errorAnswer`, answers.ts), and whoever listens hears of a refusal: the `rejected` hook, the
 * logger's warn line (or, without a logger, the refusal notes on `console.warn`), the delivery's
 * trace. Every error the receiver and the adapters answer goes through here (adapters through
 * `receiver.answerError`). The names: `refuse()` builds a refusal, `errorAnswer()` is its answer
 * alone, `answerError()` answers it and tells the listeners.
 */
import { errorAnswer, type ReceiverAnswer } from '../answers';
import type { Attempt } from '../attempt';
import type { DeliveryTrace } from '../delivery-trace';
import { traceRefusal } from '../diagnostics';
import { HooklineError } from '../errors';
import { emit, hasListeners, type ReceiverState } from '../receiver-state';
import { callUserCode } from '../user-code';

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
