/**
 * The receiver both Workers make, once per isolate on the first request or batch (bindings come with
 * it): the Durable Object store, the queue, and the handlers. The accepting Worker only verifies and
 * queues; the consumer Worker runs the handlers.
 */
import {
  type CloudflareQueue,
  cloudflareQueue,
  type DurableObjectNamespaceLike,
  durableObjectStore,
  type QueueBindingLike,
} from '@hookline/cloudflare';
import { createReceiver, type Receiver } from '@hookline/core';

export interface Env {
  WEBHOOK_SECRET: string;
  HOOKLINE_STORE: DurableObjectNamespaceLike;
  DELIVERIES: QueueBindingLike;
  /** How long each handler takes (a stand-in for slow work). */
  HANDLER_MS?: string;
  /** Bearer token of the dead-letter routes; without it they are off. */
  ADMIN_TOKEN?: string;
}

/** The consumer's `dead_letter_queue` in wrangler.consumer.toml. */
const DEAD_LETTER_QUEUE = 'hookline-deliveries-dlq';

let made: { receiver: Receiver; queue: CloudflareQueue } | undefined;

export function receiverFor(env: Env): { receiver: Receiver; queue: CloudflareQueue } {
  if (made !== undefined) return made;
  // attempts (4 by default) is the consumer's max_retries (3, Queues' default) plus the first try.
  const queue = cloudflareQueue(env.DELIVERIES, { client: env.HOOKLINE_STORE, deadLetterQueue: DEAD_LETTER_QUEUE });
  const receiver = createReceiver({
    secret: env.WEBHOOK_SECRET,
    store: durableObjectStore({ client: env.HOOKLINE_STORE }),
    queue,
    // Queues takes messages of up to 128 KB: a larger delivery could not be queued.
    maxBodyBytes: 120_000,
  });
  const handlerMs = Number(env.HANDLER_MS ?? 0);
  receiver.on('*', async (delivery) => {
    if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
    console.log(JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId }));
  });
  made = { receiver, queue };
  return made;
}
