/**
 * The worker's renderer (the receipt's is answers.ts): the outcome the steps ended a queued delivery
 * with, as what its queue should do with the job. Done, dead-lettered now, delayed without spending a
 * try (a wait is not a failure: colliding jobs would otherwise use their tries up together and be
 * dead-lettered without ever failing), or a rejection, which the queue retries with its backoff.
 */
import type { Delivery } from './events';
import type { Outcome } from './outcome';
import type { JobResult } from './queue';

type Wait = Extract<Outcome, { kind: 'wait' }>;

const DONE_JOB: JobResult = { status: 'done' };

/** The job's result, or a throw (the queue retries the job). */
export function jobResult(outcome: Outcome, delivery: Delivery<string, unknown>, claims: number): JobResult {
  const { event, deliveryId } = delivery;
  switch (outcome.kind) {
    case 'done':
    case 'duplicate':
      return DONE_JOB;
    case 'unhandled':
      return { status: 'dead', reason: `no handler takes ${event} any more`, kind: 'unhandled' };
    case 'permanent':
      return { status: 'dead', reason: `PermanentFailure: ${errorMessage(outcome.error)}`, kind: 'permanent' };
    case 'wait':
      return waitFor(outcome, deliveryId, claims);
    case 'failed':
      throw failureOf(outcome.error);
    case 'misconfigured':
      throw failureOf(outcome.refusal);
    case 'unavailable': {
      // The store failed. One that is not set up says so and names the fix: the queue keeps the
      // message as the dead letter's last error.
      const { refusal } = outcome;
      const why = refusal.code === 'CONFIGURATION_ERROR' ? refusal.message : 'the store failed';
      throw new Error(`hookline: ${deliveryId} was not processed (${why}); retry later`);
    }
    default:
      // `queued` ends a receipt, never a worker's run.
      throw new Error(`hookline: ${deliveryId} ended as ${outcome.kind} in a worker`);
  }
}

/** The first wait of a busy job; each claim of the delivery doubles it, up to the holder's lease. */
const FIRST_WAIT_MS = 250;

/**
 * How long a job that cannot run yet waits.
 *
 * - Its resource or its handler's record is busy (`resource_busy`, `handler_in_progress`): the holder
 *   may finish any moment, so exponential from 250 ms with each claim of the delivery (every wait
 *   claims it once more), capped by what the holder's lease has left, times a random factor between
 *   0.5 and 1.5 so that jobs that collided once do not come back together.
 * - Another worker runs this very delivery (`in_progress`) or its predecessor has not been seen: the
 *   holder's lease (it ends, or the other worker finished and this job is a duplicate), or the
 *   service's own next gap (30 s, 2 min, …), plus up to a fifth.
 */
export function waitDelayMs(wait: Wait, claims: number, random: () => number = Math.random): number {
  if (wait.reason === 'in_progress' || wait.reason === 'predecessor_not_seen') {
    return Math.round(Math.max(wait.waitMs, FIRST_WAIT_MS) * (1 + random() / 5));
  }
  const backoff = FIRST_WAIT_MS * 2 ** Math.min(Math.max(claims - 1, 0), 16);
  return Math.round(Math.min(backoff, Math.max(wait.waitMs, FIRST_WAIT_MS)) * (0.5 + random()));
}

function waitFor(wait: Wait, deliveryId: string, claims: number): JobResult {
  const delayMs = waitDelayMs(wait, claims);
  return { status: 'wait', delayMs, reason: `${deliveryId} is ${wait.reason}: waiting ${delayMs} ms without spending a try` };
}

/**
 * A handler's failure as the job's rejection, its class named as a PermanentFailure's is (`TypeError:
 * …`, `Error: …`): queues keep a rejection's message as the dead letter's last error, so without the
 * name a plain Error read like a bare sentence beside `PermanentFailure: …`. The handler's own error is
 * the cause.
 */
function failureOf(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(errorMessage(error));
  return new Error(`${error.name}: ${error.message}`, { cause: error });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
