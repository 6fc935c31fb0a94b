import { type JobResult, type QueueJob, queueJobEntry, refuse } from '@hookline/core/adapter';
import type { CloudflareQueue, MessageBatchLike } from './cloudflare-queue';
import type { ConsumeOptions } from './consume-batch';

type JobProcessor = (job: QueueJob) => Promise<JobResult>;

/** Options of `queueConsumer()`. */
export interface QueueConsumerOptions extends ConsumeOptions {
  /** The `cloudflareQueue()` of the queue this Worker consumes (the one the accepting Worker's receiver was given). */
  queue: CloudflareQueue;
}

/**
 * The consumer Worker's `queue()` handler for answer-fast mode: each message's delivery runs through
 * `receiver`'s handlers (claimed in its store, so a delivery is handled to success once), and the
 * message is acked, retried with backoff, re-sent after a wait (no try spent) or dead-lettered.
 * Make it once per isolate, on the first batch (bindings come with it).
 *
 * @example
 * let consume: ((batch: MessageBatch) => Promise<void>) | undefined;
 * export default {
 *   queue(batch, env) {
 *     consume ??= queueConsumer(receiverFor(env), { queue: queueFor(env) });
 *     return consume(batch);
 *   },
 * };
 */
export function queueConsumer(receiver: object, options: QueueConsumerOptions): (batch: MessageBatchLike) => Promise<void> {
  const entry = queueJobEntry(receiver);
  if (entry === undefined) {
    throw refuse('CONFIGURATION_ERROR', 'queueConsumer() needs a receiver made by createReceiver() from @hookline/core.');
  }
  const process: JobProcessor = (job) => entry.process(job);
  const { queue, ...consumeOptions } = options ?? ({} as QueueConsumerOptions);
  if (typeof queue?.consume !== 'function') {
    throw new TypeError('queueConsumer(receiver, { queue }): queue must be the cloudflareQueue(...) of the queue this Worker consumes');
  }
  return (batch) => queue.consume(batch, process, consumeOptions);
}
