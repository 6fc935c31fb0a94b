// The test queues both test Workers know, and how a Worker makes cloudflareQueue() for one. (A Worker's
// entry module may export only handlers and classes, so these live here.) Not published.
import { type CloudflareQueueOptions, cloudflareQueue, type QueueBindingLike } from './cloudflare-queue';
import type { DurableObjectNamespaceLike } from './durable-object-store';

/** A test queue: its producer binding and cloudflareQueue()'s options. */
export interface TestQueueSettings {
  binding: string;
  name: string;
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delayMs: number };
  deadLetterQueue?: string;
  shards?: number;
}

/** The end-to-end queue (consumed with queueConsumer() and a receiver). */
export const E2E_QUEUE: TestQueueSettings = { binding: 'E2E', name: 'e2e', attempts: 3, backoff: { type: 'fixed', delayMs: 1_000 } };

/** The queue whose consumer always crashes. */
export const CRASHING_QUEUE = 'crashing';

export function queueOf(env: { HOOKLINE_STORE: DurableObjectNamespaceLike; [binding: string]: unknown }, settings: TestQueueSettings) {
  const options: CloudflareQueueOptions = {
    client: env.HOOKLINE_STORE,
    name: settings.name,
    attempts: settings.attempts,
    backoff: settings.backoff,
    ...(settings.deadLetterQueue === undefined ? {} : { deadLetterQueue: settings.deadLetterQueue }),
    ...(settings.shards === undefined ? {} : { shards: settings.shards }),
  };
  return cloudflareQueue(env[settings.binding] as QueueBindingLike, options);
}
