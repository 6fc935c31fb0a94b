import {
  type DeadLetter,
  type DeadLetterRef,
  DEFAULT_RETENTION_MS,
  type DeliveryQueue,
  JobTooLargeError,
  type JobResult,
  positiveMs,
  type QueuedDelivery,
  queuedDeliveryJson,
  type QueueJob,
  refuse,
  refuseRenamedOptions,
  scopedDeliveryId,
} from '@hookline/core/adapter';
import { type ConsumeOptions, consumeBatch } from './consume-batch';
import type { DurableObjectNamespaceLike } from './durable-object-store';
import type { ListedDeadLetter } from './job-protocol';
import { jobRecordsClient } from './job-records-client';
import { MAX_BODY_BYTES, MAX_MESSAGE_BYTES, messageText, oversize } from './queue-message';

/** A Queue producer binding (`env.DELIVERIES`), as much of it as the queue uses. */
export interface QueueBindingLike {
  send(body: string, options: { contentType: 'text'; delaySeconds?: number }): Promise<void>;
}

/** One message of a batch a consumer Worker's `queue()` handler gets. */
export interface QueueMessageLike {
  readonly id: string;
  readonly body: unknown;
  /** Deliveries of this message so far, this one included (from 1). */
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

/** The batch a consumer Worker's `queue()` handler gets (`MessageBatch`). */
export interface MessageBatchLike {
  /** The name of the queue the batch comes from. */
  readonly queue: string;
  readonly messages: readonly QueueMessageLike[];
}

/** Options of `cloudflareQueue()`: the same in the accepting Worker and in the consumer Worker. */
export interface CloudflareQueueOptions {
  /**
   * The binding of the `HooklineStoreObject` class (the store's `client`, `env.HOOKLINE_STORE`): it
   * keeps a record per job, which makes enqueueing idempotent and holds the dead letters.
   */
  client: DurableObjectNamespaceLike;
  /**
   * Names the objects that keep the job records (`<name>:<shard>`), apart from the store's.
   * @default 'hookline-queue'
   */
  name?: string;
  /**
   * How many objects the job records are spread over. Change it only with no job queued and no dead
   * letter kept, or together with `name`: records would move to objects that do not know them.
   * @default 16
   */
  shards?: number;
  /**
   * Tries per job, the first included, before it is dead-lettered (1 to 101). The consumer's
   * `max_retries` in wrangler.toml counts the retries after the first: set it to `attempts - 1` (or
   * higher), so that Queues delivers the job's last try and the job's last failure is dead-lettered
   * here, with its error. Waits (a busy resource) do not count.
   * @default 4 (Queues' default `max_retries`, 3, plus the first try)
   */
  attempts?: number;
  /**
   * Delay before a retry, in milliseconds (Queues counts whole seconds: rounded up): `exponential`
   * doubles `delayMs` with each try (capped at 24 hours, the longest delay Queues takes).
   * @default { type: 'exponential', delayMs: 10_000 }
   */
  backoff?: { type: 'exponential' | 'fixed'; delayMs: number };
  /**
   * The consumer's `dead_letter_queue`, when the consumer Worker consumes it too: a message from it is
   * one Queues gave up on after `max_retries` deliveries the consumer never settled (it crashed or ran
   * past its limits), and is recorded as a dead letter.
   */
  deadLetterQueue?: string;
  /**
   * How long a completed job is remembered, so that enqueueing its delivery again is a duplicate.
   * @default 259_200_000 (72 h, the receiver's retention)
   */
  keepCompletedMs?: number;
  /**
   * How long a dead letter is kept for `deadLetters()` and `replay()`.
   * @default 1_209_600_000 (14 days)
   */
  keepDeadLettersMs?: number;
}

/** `cloudflareQueue()`'s queue: the contract, and the consumer side a `queue()` handler calls. */
export interface CloudflareQueue extends DeliveryQueue {
  /**
   * Runs each message of `batch` through `process` and settles it: ack when done (or when the message
   * carries a job that no longer needs it), a fresh message after the wait for a `wait` result (no try
   * spent), `message.retry()` with the backoff delay for a failure, and a dead letter (recorded, then
   * acked) for a `dead` result or a failure on the last try. Never rejects: a message it could not
   * settle is retried. `queueConsumer()` calls it with the receiver's processing.
   */
  consume(batch: MessageBatchLike, process: (job: QueueJob) => Promise<JobResult>, options?: ConsumeOptions): Promise<void>;
}

const HOUR_MS = 3_600_000;
/** Listing pages when replaying every dead letter. */
const REPLAY_PAGE = 100;

/** The checked options, as the producer and the consumer use them. */
export interface ResolvedQueueSettings {
  binding: QueueBindingLike;
  records: ReturnType<typeof jobRecordsClient>;
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delaySeconds: number };
  deadLetterQueue: string | undefined;
  keepCompletedMs: number;
  keepDeadLettersMs: number;
}

function resolveSettings(binding: QueueBindingLike, options: CloudflareQueueOptions): ResolvedQueueSettings {
  if (typeof binding?.send !== 'function') {
    throw new TypeError('cloudflareQueue(binding, options): binding must be a Queue producer binding (env.DELIVERIES), with send()');
  }
  refuseRenamedOptions('cloudflareQueue', options ?? {}, {
    namespace: 'client',
    maxRetries: { to: 'attempts', note: 'which counts every try, the first included (attempts = maxRetries + 1)' },
  });
  if (options?.client === undefined) {
    throw new TypeError('cloudflareQueue(binding, { client }): client must be the HooklineStoreObject binding (env.HOOKLINE_STORE)');
  }
  const attempts = options.attempts ?? 4;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 101) {
    throw new RangeError(
      `cloudflareQueue: attempts must be an integer from 1 to 101 (Queues retries a message at most 100 times), got ${attempts}`,
    );
  }
  const given = options.backoff ?? { type: 'exponential', delayMs: 10_000 };
  refuseRenamedOptions('cloudflareQueue', given, { delaySeconds: 'delayMs' });
  if (typeof given.delayMs !== 'number' || !(given.delayMs >= 0 && given.delayMs <= 86_400_000)) {
    throw new RangeError(`cloudflareQueue: backoff.delayMs must be a number from 0 to 86400000 (24 h), got ${given.delayMs}`);
  }
  // Queues takes whole seconds.
  const backoff = { type: given.type, delaySeconds: Math.ceil(given.delayMs / 1000) };
  return {
    binding,
    records: jobRecordsClient(options.client, options.name ?? 'hookline-queue', options.shards ?? 16),
    attempts,
    backoff,
    deadLetterQueue: options.deadLetterQueue,
    keepCompletedMs: positiveMs('cloudflareQueue', 'keepCompletedMs', options.keepCompletedMs ?? DEFAULT_RETENTION_MS),
    keepDeadLettersMs: positiveMs('cloudflareQueue', 'keepDeadLettersMs', options.keepDeadLettersMs ?? 14 * 24 * HOUR_MS),
  };
}

function deadLetterOf(listed: ListedDeadLetter): DeadLetter {
  const letter: DeadLetter = {
    deliveryId: listed.deliveryId,
    event: listed.event,
    attempts: listed.attempts,
    lastError: listed.lastError,
    failedAt: new Date(listed.failedAt),
  };
  if (listed.scope !== undefined && listed.scope !== '') letter.scope = listed.scope;
  return letter;
}

/**
 * Answer-fast mode on Cloudflare Queues: the accepting Worker's receiver writes each verified delivery
 * to the queue (`createReceiver({ queue: cloudflareQueue(env.DELIVERIES, { client: env.HOOKLINE_STORE }) })`)
 * and answers 202; the consumer Worker's `queue()` handler runs the handlers (`queueConsumer()`).
 *
 * Queues delivers at least once and knows neither duplicates nor a listing of dead letters, so a
 * record per job in the `HooklineStoreObject` Durable Objects names the message that carries the job:
 * enqueueing a delivery the queue holds is a duplicate, a message the job no longer needs is acked
 * unrun, and dead letters are kept there for `deadLetters()` and `replay()`. A wait (a busy resource)
 * re-sends the job as a fresh message, so it spends no try; a failure is `message.retry()` with the
 * backoff's delay. `receiver.work()` is not for Workers: consumers are the `queue()` handler.
 *
 * @example
 * const queue = cloudflareQueue(env.DELIVERIES, { client: env.HOOKLINE_STORE });
 * const receiver = createReceiver({ secret: env.WEBHOOK_SECRET, store: durableObjectStore({ client: env.HOOKLINE_STORE }), queue });
 */
export function cloudflareQueue(binding: QueueBindingLike, options: CloudflareQueueOptions): CloudflareQueue {
  const settings = resolveSettings(binding, options);
  const { records } = settings;

  async function replayListed(key: string): Promise<boolean> {
    const found = await records.deadLetter(key);
    if (found === null) return false;
    const { deliveryId, scope, job } = found.dead;
    const token = crypto.randomUUID();
    const fields = { deliveryId, ...(scope === undefined ? {} : { scope }), token, sentAt: Date.now(), tries: 0 };
    // The message first, then the record: a consumer that gets it before the record says so waits for it.
    await binding.send(messageText(fields, job), { contentType: 'text' });
    return records.revive(key, found.token, token);
  }

  return {
    name: 'cloudflare-queues',

    async enqueue(job: QueuedDelivery): Promise<{ duplicate: boolean }> {
      const { deliveryId } = job.delivery;
      const scope = job.scope === undefined || job.scope === '' ? undefined : job.scope;
      const token = crypto.randomUUID();
      const text = messageText(
        { deliveryId, ...(scope === undefined ? {} : { scope }), token, sentAt: Date.now(), tries: 0 },
        queuedDeliveryJson(job),
      );
      const bytes = oversize(text);
      if (bytes !== undefined) {
        // The receiver handles it in the request: a job Queues cannot carry must not be refused for ever.
        throw new JobTooLargeError(
          `cloudflareQueue: the job of ${deliveryId} is ${bytes} bytes; Cloudflare Queues takes messages of at most 128 KB`,
          bytes,
          MAX_MESSAGE_BYTES,
        );
      }
      // Sent before it is recorded: `send` resolves once Queues wrote the message durably, and only a
      // message that exists may be recorded as the job's (a record first, then a failed send, would
      // leave a job that nothing carries). A repeat's extra message is acked unrun by the consumer.
      await binding.send(text, { contentType: 'text' });
      return { duplicate: await records.accept(scopedDeliveryId({ deliveryId, ...(scope === undefined ? {} : { scope }) }), token) };
    },

    work() {
      throw refuse(
        'CONFIGURATION_ERROR',
        'cloudflareQueue: Cloudflare Queues pushes batches to the consumer Worker; call queueConsumer(receiver, { queue }) from its queue() handler instead of receiver.work().',
      );
    },

    async deadLetters({ limit = 100 } = {}): Promise<DeadLetter[]> {
      if (!(limit > 0)) return [];
      const perShard = Math.min(Math.ceil(limit), 1000);
      const pages = await Promise.all(Array.from({ length: records.shards }, (_, shard) => records.deadLetters(shard, perShard)));
      return pages
        .flatMap((page) => page.letters)
        .sort((a, b) => b.failedAt - a.failedAt)
        .slice(0, limit)
        .map(deadLetterOf);
    },

    replay(letter: DeadLetterRef): Promise<boolean> {
      return replayListed(scopedDeliveryId(letter));
    },

    async replayAll(): Promise<number> {
      let replayed = 0;
      for (let shard = 0; shard < records.shards; shard++) {
        let before: string | undefined;
        do {
          const page = await records.deadLetters(shard, REPLAY_PAGE, before);
          for (const letter of page.letters) if (await replayListed(letter.key)) replayed += 1;
          before = page.next;
        } while (before !== undefined);
      }
      return replayed;
    },

    async close(): Promise<void> {
      // Bindings hold no connection of their own.
    },

    async bodyLimitBytes(): Promise<number> {
      return MAX_BODY_BYTES;
    },

    consume(batch, process, consumeOptions) {
      return consumeBatch(settings, batch, process, consumeOptions);
    },
  };
}
