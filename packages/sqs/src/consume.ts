// What the consumer does with one received message, the same for the long-polling worker and for a
// Lambda function behind an event source mapping: run it through the receiver's per-job processing,
// then act on the result with SQS's own operations.
//
// Every outcome but a plain success ends the message by sending its next one (SQS cannot change a
// message in place): a retry or a wait is a fresh copy, delayed, carrying the tries spent; a dead
// letter is a copy in the dead-letter queue carrying why. The received message itself is then
// acknowledged (deleted). Why copies rather than the visibility timeout: a message made invisible
// for a while comes back with `ApproximateReceiveCount` one higher, and that count drives the redrive
// policy, so a job that waited on a busy resource a few times would be dead-lettered without ever
// failing. A copy starts its count afresh and spends a try only when it carries one more. Sending
// first and acknowledging after means a crash in between leaves two messages of one job, never none:
// the worker's claim in the store runs its handlers once either way.
import { type JobResult, type QueueJob, scopedDeliveryId, waitInWholeSeconds } from '@hookline/core/adapter';
import type { JobRecords } from './job-records';
import {
  ATTRIBUTES,
  errorText,
  identityAttributes,
  identityOf,
  numberAttribute,
  numberOf,
  payloadOf,
  type ReceivedMessage,
  type StringAttribute,
  stringAttribute,
} from './message';

/** SQS's longest per-message delay (DelaySeconds). */
export const MAX_DELAY_MS = 900_000;
/** SQS's longest visibility timeout, counted from the receive. */
export const MAX_VISIBILITY_MS = 43_200_000;

/** What becomes of the received message: deleted (`ack`), or left to come back after its visibility timeout (`keep`). */
export type Outcome = 'ack' | 'keep';

/** The queue's side of consuming: its settings and the SQS calls, bounded by the queue. */
export interface ConsumerContext {
  readonly fifo: boolean;
  /** Tries per job, the first included. */
  readonly attempts: number;
  /** Returns of one message whose consumer stopped without a result, before it is dead-lettered. */
  readonly maxStalls: number;
  /** The delay before the try after `triesSpent` failed ones. */
  retryDelayMs(triesSpent: number): number;
  /** Sends a message to the queue (`delayMs` from now) or to the dead-letter queue. */
  send(
    target: 'queue' | 'dead',
    message: { body: string; attributes: Record<string, StringAttribute>; delayMs: number; groupOf: string },
  ): Promise<void>;
  changeVisibility(message: ReceivedMessage, seconds: number): Promise<void>;
  readonly records: JobRecords | undefined;
  onError(error: Error): void;
}

/** Runs `process` for the message (or not: a copy not yet due, a message that stalled too often) and settles it. */
export async function consume(
  context: ConsumerContext,
  message: ReceivedMessage,
  process: (job: QueueJob) => Promise<JobResult>,
): Promise<Outcome> {
  const payload = payloadOf(message.body);
  const { deliveryId, scope } = identityOf(message, payload);
  const scopedId = scopedDeliveryId({ deliveryId, scope });
  const tries = Math.max(0, numberOf(message, ATTRIBUTES.tries) ?? 0);
  const due = numberOf(message, ATTRIBUTES.due);
  const now = Date.now();
  const settle = settler(context, message, { deliveryId, scope, scopedId, tries });
  try {
    if (due !== undefined && due > now) {
      // Received before it is due (a FIFO copy, or one delayed past 15 minutes): hidden until then,
      // not run, nothing spent.
      await context.changeVisibility(message, Math.ceil(Math.min(due - now, MAX_VISIBILITY_MS) / 1000));
      return 'keep';
    }
    // Receives that ended without a result (the process died, the invocation timed out); one receive
    // before a copy was due is expected for each 12 hours of its delay.
    const early = due === undefined ? 0 : Math.max(1, Math.ceil((due - message.sentAt) / MAX_VISIBILITY_MS));
    const stalls = message.receiveCount - 1 - early;
    if (stalls > context.maxStalls) {
      await settle.dead(tries, `stalled ${stalls} times: its consumer stopped (crashed or timed out) before finishing it`);
      return 'ack';
    }
    let result: JobResult | undefined;
    let failure: unknown;
    try {
      result = await process({ payload, attempt: tries + 1, maxAttempts: context.attempts });
    } catch (error) {
      failure = error;
    }
    if (result?.status === 'done') return 'ack';
    if (result?.status === 'dead') await settle.dead(tries + 1, result.reason);
    // A wait keeps its jitter through SQS's whole seconds (rounded at random, not up); a retry's delay is rounded up.
    else if (result?.status === 'wait') await settle.again(tries, waitInWholeSeconds(result.delayMs) * 1000);
    else if (tries + 1 >= context.attempts) await settle.dead(tries + 1, messageOf(failure));
    else await settle.again(tries + 1, context.retryDelayMs(tries + 1));
    return 'ack';
  } catch (error) {
    // SQS or the store failed while settling: the message comes back after its visibility timeout.
    context.onError(error instanceof Error ? error : new Error(String(error)));
    return 'keep';
  }
}

function settler(
  context: ConsumerContext,
  message: ReceivedMessage,
  job: { deliveryId: string; scope: string | undefined; scopedId: string; tries: number },
) {
  const identity = identityAttributes(message, job.deliveryId, job.scope);
  return {
    /** The job's next message: `tries` spent so far, due in `delayMs`. */
    async again(tries: number, delayMs: number): Promise<void> {
      const wait = Math.max(0, delayMs);
      const attributes: Record<string, StringAttribute> = { ...identity, [ATTRIBUTES.tries]: numberAttribute(tries) };
      // A FIFO queue takes no per-message delay, and SQS delays at most 15 minutes: the copy carries
      // its due time, and a consumer that receives it early hides it until then.
      if (context.fifo || wait > MAX_DELAY_MS) attributes[ATTRIBUTES.due] = numberAttribute(Date.now() + wait);
      await context.send('queue', { body: message.body, attributes, delayMs: wait, groupOf: job.scopedId });
    },
    /** The job's dead letter, then its records: the dead record first, so a letter is never listed as stale. */
    async dead(tries: number, reason: string): Promise<void> {
      await context.records?.markDead(job.scopedId);
      await context.send('dead', {
        body: message.body,
        attributes: {
          ...identity,
          [ATTRIBUTES.tries]: numberAttribute(tries),
          [ATTRIBUTES.error]: stringAttribute(errorText(reason)),
          [ATTRIBUTES.failedAt]: numberAttribute(Date.now()),
        },
        delayMs: 0,
        groupOf: job.scopedId,
      });
      await context.records?.releaseJob(job.scopedId, message.attributes.get(ATTRIBUTES.token));
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
