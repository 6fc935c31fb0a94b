/**
 * Step 4b in answer-fast mode, enqueue, right after match (step 3 is skipped): instead of claiming
 * the delivery and running its handlers, hand it to the queue and answer from what the queue says.
 * This is the whole accept path, one call to the queue (one round trip to Redis for BullMQ, one
 * statement for pg-boss): the queue's idempotent enqueue is the receipt, and the exactly-once claim is
 * the worker's (under the `work:` keys).
 *
 * - A job the queue did not hold is written durably, then answered 202: nothing is answered 2xx before
 *   the queue said the job is durable.
 * - A job the queue holds (waiting, delayed, running, done) is a duplicate: 200, nothing added.
 * - A job the queue holds as a dead letter is put back with fresh tries (202): the service's replay of
 *   a delivery that never completed must run it.
 * - A queue that fails or cannot say: 503, and the service retries. The answer, the log line and the
 *   trace name the queue (its phase, channel and time-out are its own: queue-call.ts), not the store.
 * - A job larger than the queue carries (`JobTooLargeError`): handled in the request, as synchronous
 *   mode would, never refused for ever (below).
 *
 * A job whose record the queue already let go (its retention ran out) is enqueued again when the
 * service repeats the delivery; the worker's claim finds its completion in the store and runs nothing.
 * Two receivers that enqueue one delivery at once both answer 2xx over one job (the queue
 * de-duplicates), or over two jobs on a queue that cannot (the second job's claim runs nothing).
 *
 * Before this step, the receipt was also claimed and completed in the store: three round trips where
 * this makes one, and in the accepted-rate benchmark (`bench/src/queue/`) the web process and Redis
 * spent most of their extra CPU on those two store calls.
 */
import * as answers from '../answers';
import { type Attempt, useKeys } from '../attempt';
import { DUPLICATE, type Outcome, QUEUED } from '../outcome';
import { JobTooLargeError, type QueuedDelivery, withBodyJson } from '../queue';
import { callQueue, QueueTimeoutError } from '../queue-call';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import { step } from '../step';
import { scopeOf, workPrefix } from '../store-keys';

/** The outcome of the enqueue, or undefined for a job the queue cannot carry: the next steps handle it in the request. */
export const enqueue = step({ call: enqueueJob });

async function enqueueJob(state: ReceiverState, attempt: Attempt): Promise<Outcome | undefined> {
  const queue = state.config.queue as NonNullable<typeof state.config.queue>;
  let duplicate: boolean;
  try {
    ({ duplicate } = await callQueue(attempt, queue.name, state.config.enqueueTimeoutMs, () => queue.enqueue(queuedJob(state, attempt))));
  } catch (error) {
    if (JobTooLargeError.is(error)) return handleInRequest(state, attempt);
    reportError(state, error, { phase: 'queue', delivery: attempt.delivery });
    const reason = error instanceof QueueTimeoutError ? 'queue_timeout' : 'queue_unavailable';
    return { kind: 'unavailable', refusal: answers.queueUnavailable(queue.name, error, reason) };
  }
  if (!duplicate) {
    attempt.outcome = 'queued';
    return QUEUED;
  }
  attempt.outcome = 'duplicate';
  if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'completed' });
  return DUPLICATE;
}

/**
 * A delivery the queue cannot carry: its enqueue rejected with `JobTooLargeError` (larger than the
 * queue's message size limit, SQS's `MaximumMessageSize` or Cloudflare Queues' 128 KB, with what the
 * backend adds to a message). The receiver accepted the body (it is within `maxBodyBytes`), and the
 * queue will refuse it on every retry: answered 503, the service would retry it 7 times and give up.
 * So it is handled in the request, as synchronous mode handles every delivery: the steps after this
 * one claim it, run its handlers (a 503 `deadline` past `deadlineMs` while they go on) and settle it.
 *
 * The claim is made under the worker's keys (`work:`), where the queue's jobs of this delivery would
 * be claimed: should the same delivery ever reach a worker too (the queue's limit raised between two
 * of the service's attempts), its claim finds this run's lease or completion, and the handlers run
 * once. Spilling the body to the store and queueing a reference instead was not chosen: a store is a
 * key-value lease table (`IdempotencyStore`), not a place for megabytes, and the handlers of such a
 * delivery would then depend on two systems instead of one.
 */
function handleInRequest(state: ReceiverState, attempt: Attempt): undefined {
  useKeys(attempt, workPrefix(state.config.namespace, scopeOf(attempt.keyPrefix, state.config.namespace)));
  return undefined;
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
