/**
 * Answer-fast mode, a delivery the queue cannot carry: its enqueue rejected with `JobTooLargeError`
 * (larger than the queue's message size limit, SQS's `MaximumMessageSize` or Cloudflare Queues' 128
 * KB, with what the backend adds to a message). The receiver accepted the body (it is within
 * `maxBodyBytes`), and the queue will refuse it on every retry: answered 503, the service would retry
 * it 7 times and give up. So it is handled here, in the request, as synchronous mode handles every
 * delivery: claimed, its handlers run (a 503 `deadline` past `deadlineMs` while they go on), settled,
 * answered 200 (or 500 for a failure, and the service retries it, here again).
 *
 * The claim is made under the worker's keys (`work:`), where the queue's jobs of this delivery would
 * be claimed: should the same delivery ever reach a worker too (the queue's limit raised between two
 * of the service's attempts), its claim finds this run's lease or completion, and the handlers run
 * once. Spilling the body to the store and queueing a reference instead was not chosen: a store is a
 * key-value lease table (`IdempotencyStore`), not a place for megabytes, and the handlers of such a
 * delivery would then depend on two systems instead of one.
 */
import type * as answers from '../answers';
import { type Attempt, newAttempt } from '../attempt';
import type { ReceiverState } from '../receiver-state';
import { scopeOf, workPrefix } from '../store-keys';
import { claim } from './claim';
import { runHandlers } from './run-handlers';

export async function handleInRequest(state: ReceiverState, attempt: Attempt): Promise<answers.ReceiverAnswer> {
  const here = newAttempt({
    mode: 'receive',
    delivery: attempt.delivery,
    timestampMs: attempt.timestampMs,
    receivedAt: attempt.receivedAt,
    secretIndex: attempt.secretIndex,
    headers: attempt.headers,
    keyPrefix: workPrefix(state.config.namespace, scopeOf(attempt.keyPrefix, state.config.namespace)),
    trace: attempt.trace,
  });
  here.matched = attempt.matched;
  try {
    return (await claim(state, here)) ?? (await runHandlers(state, here));
  } finally {
    // The pipeline traces and answers for the receipt's attempt: it ends as this run did.
    attempt.outcome = here.outcome;
    attempt.error = here.error;
    attempt.claims = here.claims;
  }
}
