/**
 * The consumer side of cloudflareQueue(): what a `queue()` handler does with each message of a batch.
 *
 * Queues counts a message's deliveries (`message.attempts`) and moves a message to the dead-letter
 * queue after `max_retries`, whatever the consumer meant. The contract asks for more: a job that waits
 * for a busy resource must not spend a try, and a job that can never succeed must be dead-lettered at
 * once. So the consumer decides, per message:
 *
 * - done: the job's record says completed, then `ack()`;
 * - wait: the job goes on in a fresh message sent with the wait as its delay and the tries spent so far
 *   in its body, and the old one is acked. Queues' count restarts with the fresh message; the job's
 *   own count (`tries` + `attempts`) does not move;
 * - failure: `retry({ delaySeconds })` with the backoff, which Queues counts; on the job's last try
 *   (`attempts`, no later than Queues' own limit when `max_retries` is `attempts - 1` or more) it is
 *   dead-lettered here;
 * - dead (PermanentFailure, a corrupt job, the last failure): the job's record becomes a dead letter
 *   (listable and replayable), then `ack()`.
 *
 * Before running a job the consumer asks its record whether this message still carries it: a message
 * Queues delivers twice after the job completed, or a repeat's extra message, is acked unrun. The
 * receiver's own claim in its store (`work:` keys) is what keeps handlers from running twice when two
 * deliveries of one message overlap.
 */
import { cutToBytes, type JobResult, type QueueJob, scopedDeliveryId, waitInWholeSeconds } from '@hookline/core/adapter';
import type { MessageBatchLike, QueueMessageLike, ResolvedQueueSettings } from './cloudflare-queue';
import type { DeadRecord } from './job-protocol';
import { type JobMessage, messageText, readMessage } from './queue-message';

/** Options of `consume()` and `queueConsumer()`. */
export interface ConsumeOptions {
  /**
   * Messages of one batch run at once (the batch's size is `max_batch_size` in wrangler.toml).
   * @default every message of the batch
   */
  concurrency?: number;
  /**
   * Hears what the consumer could not do with a message (a job record the Durable Object did not
   * write, a re-send Queues refused); the message is retried then, or acked when its handlers already
   * succeeded. Handler errors go to the receiver's own `onError`.
   * @default console.error
   */
  onError?: (error: unknown, message: { id: string; deliveryId?: string }) => void;
}

/** Queues' longest delay, on `send()` and on `retry()` (24 hours): https://developers.cloudflare.com/queues/configuration/batching-retries/#delay-messages */
const MAX_DELAY_SECONDS = 86_400;
/**
 * The most bytes of error text a dead letter keeps: its record holds the job too (up to 128 KB), and a
 * Durable Object's stored value is limited (128 KiB in the key-value storage of objects without SQLite).
 */
const MAX_ERROR_BYTES = 1_000;
/**
 * How long a message for a dead letter may wait for the record of its revival (the producer sends the
 * message before it writes the record), and how long it waits each time.
 */
const REVIVAL_GRACE_MS = 60_000;
const REVIVAL_WAIT_SECONDS = 1;

interface Batch {
  settings: ResolvedQueueSettings;
  process: (job: QueueJob) => Promise<JobResult>;
  fromDeadLetterQueue: boolean;
  report: NonNullable<ConsumeOptions['onError']>;
}

function reportToConsole(error: unknown, message: { id: string; deliveryId?: string }): void {
  const about = message.deliveryId === undefined ? message.id : `${message.id} (${message.deliveryId})`;
  console.error(`hookline: cloudflareQueue could not settle message ${about}:`, error);
}

export async function consumeBatch(
  settings: ResolvedQueueSettings,
  batch: MessageBatchLike,
  process: (job: QueueJob) => Promise<JobResult>,
  options: ConsumeOptions = {},
): Promise<void> {
  const { messages } = batch;
  const concurrency = options.concurrency ?? Math.max(messages.length, 1);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`cloudflareQueue: concurrency must be a positive integer, got ${String(concurrency)}`);
  }
  const context: Batch = {
    settings,
    process,
    fromDeadLetterQueue: settings.deadLetterQueue !== undefined && batch.queue === settings.deadLetterQueue,
    report: options.onError ?? reportToConsole,
  };
  let next = 0;
  const lane = async () => {
    while (next < messages.length) {
      const message = messages[next++] as QueueMessageLike;
      try {
        await consumeMessage(context, message);
      } catch (error) {
        // A bug of ours, or a report listener that threw: the message comes again rather than being lost.
        context.report(error, { id: message.id });
        message.retry();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, messages.length) }, lane));
}

function retryDelaySeconds(settings: ResolvedQueueSettings, attempt: number): number {
  const { type, delaySeconds } = settings.backoff;
  const seconds = type === 'fixed' ? delaySeconds : delaySeconds * 2 ** Math.min(Math.max(attempt - 1, 0), 16);
  return Math.min(seconds, MAX_DELAY_SECONDS);
}

function retry(message: QueueMessageLike, delaySeconds: number): void {
  message.retry(delaySeconds > 0 ? { delaySeconds } : undefined);
}

async function consumeMessage(context: Batch, message: QueueMessageLike): Promise<void> {
  const { settings } = context;
  const read = readMessage(message.body);
  if (typeof read === 'string') return deadLetterForeign(context, message, read);
  const key = scopedDeliveryId(read.scope === undefined ? read.deliveryId : { deliveryId: read.deliveryId, scope: read.scope });
  const attempt = read.tries + message.attempts;
  const about = { id: message.id, deliveryId: read.deliveryId };

  if (context.fromDeadLetterQueue) {
    const lastError = `Cloudflare Queues moved it to the dead-letter queue ${settings.deadLetterQueue}: no delivery of it was settled (the consumer crashed, or ran past its time or CPU limit, each time)`;
    return deadLetter(context, message, key, read, read.tries + settings.attempts, lastError);
  }

  let verdict: Awaited<ReturnType<typeof settings.records.begin>>;
  try {
    verdict = await settings.records.begin(key, read.token, read.sentAt, REVIVAL_GRACE_MS);
  } catch (error) {
    context.report(error, about);
    return retry(message, retryDelaySeconds(settings, attempt));
  }
  if (verdict === 'drop') return message.ack();
  if (verdict === 'wait') return resend(context, message, read, read.tries, REVIVAL_WAIT_SECONDS);

  let result: JobResult | undefined;
  let failure: unknown;
  try {
    result = await context.process({ payload: read.job, attempt, maxAttempts: settings.attempts });
  } catch (error) {
    failure = error;
  }
  if (result?.status === 'done') {
    try {
      await settings.records.done(key, read.token, settings.keepCompletedMs);
    } catch (error) {
      // The handlers succeeded (their completion is in the receiver's store): the message is done with.
      context.report(error, about);
    }
    return message.ack();
  }
  if (result?.status === 'wait') {
    // Rounded at random, not up: the worker's jitter keeps colliding jobs apart only if it survives.
    const seconds = Math.min(waitInWholeSeconds(result.delayMs), MAX_DELAY_SECONDS);
    return resend(context, message, read, attempt - 1, seconds);
  }
  if (result?.status === 'dead') return deadLetter(context, message, key, read, attempt, result.reason);
  const lastError = failure instanceof Error ? failure.message : String(failure);
  if (attempt >= settings.attempts) return deadLetter(context, message, key, read, attempt, lastError);
  retry(message, retryDelaySeconds(settings, attempt));
}

/**
 * The job goes on in a fresh message (same token, `tries` spent so far), delayed by `delaySeconds`; the
 * old one is acked. Should Queues refuse the send, the old message is retried instead, which spends one
 * of Queues' deliveries but loses nothing.
 */
async function resend(context: Batch, message: QueueMessageLike, read: JobMessage, tries: number, delaySeconds: number): Promise<void> {
  const { deliveryId, scope, token, sentAt } = read;
  const text = messageText(
    { deliveryId, ...(scope === undefined ? {} : { scope }), token, sentAt, tries },
    JSON.stringify(read.job ?? null),
  );
  try {
    await context.settings.binding.send(text, { contentType: 'text', delaySeconds });
  } catch (error) {
    context.report(error, { id: message.id, deliveryId });
    return retry(message, delaySeconds);
  }
  message.ack();
}

function eventOf(job: unknown): string {
  const event = (job as { delivery?: { event?: unknown } } | null)?.delivery?.event;
  return typeof event === 'string' && event !== '' ? event : 'unknown';
}

async function deadLetter(
  context: Batch,
  message: QueueMessageLike,
  key: string,
  read: JobMessage,
  attempts: number,
  lastError: string,
): Promise<void> {
  const dead: Omit<DeadRecord, 'failedAt'> = {
    deliveryId: read.deliveryId,
    ...(read.scope === undefined ? {} : { scope: read.scope }),
    event: eventOf(read.job),
    attempts,
    lastError: cutToBytes(lastError, MAX_ERROR_BYTES),
    job: JSON.stringify(read.job ?? null),
  };
  await recordDead(context, message, key, read.token, dead);
}

/** A message this package did not send (or cannot read): a dead letter under the message's own id. */
async function deadLetterForeign(context: Batch, message: QueueMessageLike, problem: string): Promise<void> {
  let job: string;
  try {
    job = JSON.stringify(message.body ?? null);
  } catch {
    job = JSON.stringify(String(message.body));
  }
  const dead = {
    deliveryId: message.id,
    event: 'unknown',
    attempts: message.attempts,
    lastError: cutToBytes(`corrupt job: ${problem}`, MAX_ERROR_BYTES),
    job,
  };
  await recordDead(context, message, message.id, message.id, dead);
}

async function recordDead(
  context: Batch,
  message: QueueMessageLike,
  key: string,
  token: string,
  dead: Omit<DeadRecord, 'failedAt'>,
): Promise<void> {
  const { settings } = context;
  try {
    await settings.records.dead(key, token, settings.keepDeadLettersMs, dead);
  } catch (error) {
    // Not recorded, so not acked: the message comes again and is dead-lettered then (or, past Queues'
    // max_retries, lands in its dead-letter queue).
    context.report(error, { id: message.id, deliveryId: dead.deliveryId });
    return retry(message, retryDelaySeconds(settings, dead.attempts));
  }
  message.ack();
}
