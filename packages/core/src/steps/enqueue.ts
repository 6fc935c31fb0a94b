/**
 * Step 3 in answer-fast mode, enqueue: instead of running the handlers, write the delivery durably to
 * the queue, then complete the receipt and answer 202. The receipt is completed only once the queue
 * said the job is durable, so nothing is answered 2xx before that; if the queue fails, the claim is
 * released and the answer is 503 (the service retries). A crash between the enqueue and the
 * completion leaves a job and an open lease: the retry enqueues again, which the queue de-duplicates
 * on the deliveryId, and the worker's own claim runs the handlers once either way.
 */
import * as answers from '../answers';
import type { Attempt } from '../attempt';
import { type QueuedDelivery, withBodyJson } from '../queue';
import { type ReceiverState, reportError } from '../receiver-state';
import { callStore } from '../store-call';
import { answerRefusal } from './refuse';
import { record } from './settle';

export async function enqueue(state: ReceiverState, attempt: Attempt): Promise<answers.ReceiverAnswer> {
  const queue = state.config.queue as NonNullable<typeof state.config.queue>;
  const job: QueuedDelivery = { delivery: attempt.delivery, receivedAt: attempt.receivedAt, secretIndex: attempt.secretIndex };
  const scope = attempt.keyPrefix.slice(state.config.namespace.length);
  if (scope !== '') job.scope = scope;
  const { trace } = attempt;
  if (trace?.traceparent !== undefined) job.traceparent = trace.traceparent;
  if (trace?.tracestate !== undefined) job.tracestate = trace.tracestate;
  if (attempt.bodyText !== undefined) withBodyJson(job, attempt.bodyText);
  try {
    await callStore(attempt, 'enqueue', state.config.storeTimeoutMs, () => queue.enqueue(job));
  } catch (error) {
    reportError(state, error, { phase: 'store', delivery: attempt.delivery });
    await record(state, attempt, { error });
    return answerRefusal(state, answers.queueUnavailable(queue.name, error), attempt, trace);
  }
  await record(state, attempt, undefined);
  attempt.outcome = 'queued';
  return answers.queuedAnswer();
}
