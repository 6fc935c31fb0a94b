/**
 * Step 4b in answer-fast mode, enqueue: instead of running the handlers, write the delivery durably to
 * the queue, then complete the receipt and answer 202. The receipt is completed only once the queue
 * said the job is durable, so nothing is answered 2xx before that; if the queue fails, the claim is
 * released and the answer is 503 (the service retries). A crash between the enqueue and the
 * completion leaves a job and an open lease: the retry enqueues again, which the queue de-duplicates
 * on the deliveryId, and the worker's own claim runs the handlers once either way. A delivery queued
 * before comes back here too (`enqueueAgain`), so that a replay of one whose job was dead-lettered
 * runs it.
 */
import * as answers from '../answers';
import type { Attempt } from '../attempt';
import { type QueuedDelivery, withBodyJson } from '../queue';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import { callStore } from '../store-call';
import { scopeOf } from '../store-keys';
import { answerError } from './answer-error';
import { record } from './record';

export async function enqueue(state: ReceiverState, attempt: Attempt): Promise<answers.ReceiverAnswer> {
  const queue = state.config.queue as NonNullable<typeof state.config.queue>;
  try {
    await callStore(attempt, 'enqueue', state.config.enqueueTimeoutMs, () => queue.enqueue(queuedJob(state, attempt)));
  } catch (error) {
    reportError(state, error, { phase: 'store', delivery: attempt.delivery });
    await record(state, attempt, { error });
    return answerError(state, answers.queueUnavailable(queue.name, error), attempt, attempt.trace);
  }
  await record(state, attempt, undefined);
  attempt.outcome = 'queued';
  return answers.queuedAnswer();
}

/**
 * A delivery whose receipt is completed (it was queued before) is handed to the queue again rather
 * than answered as a duplicate at once: the queue alone knows whether its job ended in the dead
 * letters. There it is put back with fresh tries (202): the service's replay of a delivery that never
 * completed must run it. A job the queue still holds in any other state (waiting, running, done) is
 * a duplicate (200). A queue that cannot say answers 503, and the service asks again later.
 */
export async function enqueueAgain(state: ReceiverState, attempt: Attempt): Promise<answers.ReceiverAnswer> {
  const queue = state.config.queue as NonNullable<typeof state.config.queue>;
  let duplicate: boolean;
  try {
    ({ duplicate } = await callStore(attempt, 'enqueue', state.config.enqueueTimeoutMs, () => queue.enqueue(queuedJob(state, attempt))));
  } catch (error) {
    reportError(state, error, { phase: 'store', delivery: attempt.delivery });
    return answerError(state, answers.queueUnavailable(queue.name, error), attempt, attempt.trace);
  }
  if (!duplicate) {
    attempt.outcome = 'queued';
    return answers.queuedAnswer();
  }
  attempt.outcome = 'duplicate';
  if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'completed' });
  return answers.duplicateAnswer();
}

/** The job for the attempt's delivery: what a worker needs, and nothing a worker must not trust. */
function queuedJob(state: ReceiverState, attempt: Attempt): QueuedDelivery {
  const job: QueuedDelivery = { delivery: attempt.delivery, receivedAt: attempt.receivedAt, secretIndex: attempt.secretIndex };
  const scope = scopeOf(attempt.keyPrefix, state.config.namespace);
  if (scope !== '') job.scope = scope;
  const { trace } = attempt;
  if (trace?.traceparent !== undefined) job.traceparent = trace.traceparent;
  if (trace?.tracestate !== undefined) job.tracestate = trace.tracestate;
  if (attempt.bodyText !== undefined) withBodyJson(job, attempt.bodyText);
  return job;
}
