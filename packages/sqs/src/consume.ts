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
// failing. A copy starts its count afresh and spends a try only when it carries one more. A message
// has one next message at most, whoever received it (successors.ts): a crash between the send and
// the deletion, or a message handed out twice, never forks its job.
import { randomUUID } from 'node:crypto';
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
import { type Outcome, sendSuccessor, stillCarries } from './successors';

export type { Outcome } from './successors';

/** SQS's longest per-message delay (DelaySeconds). */
export const MAX_DELAY_MS = 900_000;
/** SQS's longest visibility timeout, counted from the receive. */
export const MAX_VISIBILITY_MS = 43_200_000;
/**
 * Kept back from the 12 hours a message may be hidden from its receive: the clocks of this process and
 * SQS's, and the time between the receive and the call, may differ by this much.
 */
export const HIDE_MARGIN_MS = 60_000;
/** The least one hide of a copy not yet due achieves (see `hideMs`): for counting its expected early receives. */
const HIDE_STEP_MS = 10 * 3_600_000;

/** The queue's side of consuming: its settings and the SQS calls, bounded by the queue. */
export interface ConsumerContext {
  readonly fifo: boolean;
  /** Tries per job, the first included. */
  readonly attempts: number;
  /** Returns of one message whose consumer stopped without a result, before it is dead-lettered. */
  readonly maxStalls: number;
  /** The delay before the try after `triesSpent` failed ones. */
  retryDelayMs(triesSpent: number): number;
  /**
   * Sends a message to the queue (`delayMs` from now) or to the dead-letter queue, as the next message
   * of the one with the SQS id `after` (a FIFO queue deduplicates on it).
   */
  send(
    target: 'queue' | 'dead',
    message: { body: string; attributes: Record<string, StringAttribute>; delayMs: number; groupOf: string; after: string },
  ): Promise<void>;
  changeVisibility(message: ReceivedMessage, seconds: number): Promise<void>;
  /**
   * Whether the queue holds so many messages in flight that a failed job is dead-lettered rather than
   * hidden until its retry (`maxInFlight`): a hidden copy is one more in flight.
   */
  crowded(): Promise<boolean>;
  readonly records: JobRecords;
  onError(error: Error): void;
}

/**
 * How long a copy not yet due can be hidden now: until it is due, but within 12 hours of its receive
 * (counted from `receivedAt`, the earliest the receive can have been), less a margin. Zero: it cannot
 * be hidden any longer this receive.
 */
export function hideMs(message: ReceivedMessage, due: number, now: number): number {
  return Math.max(0, Math.min(due - now, MAX_VISIBILITY_MS - (now - message.receivedAt) - HIDE_MARGIN_MS));
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
  const settle = settler(context, message, { deliveryId, scope, scopedId, tries });
  try {
    const ended = await stillCarries(context.records, message);
    if (ended !== undefined) return ended;
    const now = Date.now();
    if (due !== undefined && due > now) {
      // Received before it is due (a FIFO copy, or one delayed past 15 minutes): hidden until then (in
      // steps of up to 12 hours from each receive), not run, nothing spent.
      const ms = hideMs(message, due, now);
      if (ms > 0) await context.changeVisibility(message, Math.ceil(ms / 1000));
      return 'keep';
    }
    // Receives that ended without a result (the process died, the invocation timed out); one receive
    // before a copy was due is expected for each hide of it.
    const early = due === undefined ? 0 : Math.max(1, Math.ceil((due - message.sentAt) / HIDE_STEP_MS));
    const stalls = message.receiveCount - 1 - early;
    if (stalls > context.maxStalls) {
      return await settle.dead(tries, `stalled ${stalls} times: its consumer stopped (crashed or timed out) before finishing it`);
    }
    let result: JobResult | undefined;
    let failure: unknown;
    try {
      result = await process({ payload, attempt: tries + 1, maxAttempts: context.attempts });
    } catch (error) {
      failure = error;
    }
    if (result?.status === 'done') return 'ack';
    if (result?.status === 'dead') return await settle.dead(tries + 1, result.reason);
    // A wait keeps its jitter through SQS's whole seconds (rounded at random, not up); a retry's delay is rounded up.
    if (result?.status === 'wait') return await settle.again(tries, waitInWholeSeconds(result.delayMs) * 1000);
    if (tries + 1 >= context.attempts) return await settle.dead(tries + 1, messageOf(failure));
    const delayMs = context.retryDelayMs(tries + 1);
    if ((context.fifo || delayMs > MAX_DELAY_MS) && (await context.crowded())) {
      return await settle.dead(
        tries + 1,
        `${messageOf(failure)} (dead-lettered rather than retried: the queue is at its maxInFlight, and a retry waiting for its time would be one more message in flight; replay it once the queue has room)`,
      );
    }
    return await settle.again(tries + 1, delayMs);
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
  const { records } = context;
  return {
    /** The job's next message: `tries` spent so far, due in `delayMs`. */
    again(tries: number, delayMs: number): Promise<Outcome> {
      const wait = Math.max(0, delayMs);
      return sendSuccessor(
        records,
        message,
        randomUUID(),
        (after) => {
          const attributes: Record<string, StringAttribute> = {
            ...identity,
            [ATTRIBUTES.tries]: numberAttribute(tries),
            [ATTRIBUTES.after]: stringAttribute(after),
          };
          // A FIFO queue takes no per-message delay, and SQS delays at most 15 minutes: the copy carries
          // its due time, and a consumer that receives it early hides it until then.
          if (context.fifo || wait > MAX_DELAY_MS) attributes[ATTRIBUTES.due] = numberAttribute(Date.now() + wait);
          return context.send('queue', { body: message.body, attributes, delayMs: wait, groupOf: job.scopedId, after: message.messageId });
        },
        context.onError,
      );
    },
    /** The job's dead letter, then its records: the dead record first, so a letter is never listed as stale. */
    dead(tries: number, reason: string): Promise<Outcome> {
      return sendSuccessor(
        records,
        message,
        randomUUID(),
        async () => {
          await records.markDead(job.scopedId);
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
            after: message.messageId,
          });
          // The letter is out: a record left held (the store failed now) only makes the service's replay a
          // duplicate until `replay()` frees it with the letter's token.
          await records.releaseJob(job.scopedId, message.attributes.get(ATTRIBUTES.token)).catch((error: unknown) => {
            context.onError(error instanceof Error ? error : new Error(String(error)));
          });
        },
        context.onError,
      );
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
