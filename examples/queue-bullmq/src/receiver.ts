/**
 * The receiver both processes share: the same secret, the same Redis store and the same BullMQ queue.
 * The web process (src/web.ts) only verifies, records and enqueues; the worker (src/worker.ts) runs
 * these handlers. Handlers are registered in both (the web process checks that a handler exists
 * before it enqueues), so keep them in one module like this one.
 *
 * Environment: WEBHOOK_SECRET (required), REDIS_URL (default redis://127.0.0.1:6379), QUEUE_NAME
 * (default hookline-example), REDIS_PREFIX for the store's keys (default hookline-example:), and
 * HANDLER_MS, how long the stand-in handler takes (default 2000: slower than most requests should be).
 */
import { createReceiver } from '@hookline/core';
import { bullmqQueue } from '@hookline/bullmq';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const handlerMs = Number(process.env.HANDLER_MS ?? 2_000);

// The store's client fails fast while Redis is away (no offline queue): the receiver answers 503 and
// the service retries. BullMQ opens its own connections from `connection`.
export const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
client.on('error', (error: Error) => console.error(`[redis] ${error.message}`));

const READY_WITHIN_MS = 10_000;

/**
 * Resolves once the store's connection is ready; both processes wait for it before they take work.
 * Without the offline queue a command sent before then fails, so a delivery that came first would be
 * answered 503 (the service would retry it, but need not). A Redis that is not there at start-up
 * (a wrong REDIS_URL, say) ends the process after 10 s with a message, rather than serving only 503s.
 */
export function redisReady(): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      console.error(`Redis at ${redisUrl} was not ready within ${READY_WITHIN_MS / 1000} s: check REDIS_URL and that Redis runs.`);
      process.exit(1);
    }, READY_WITHIN_MS);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export const queue = bullmqQueue({
  connection: { url: redisUrl, maxRetriesPerRequest: null },
  name: process.env.QUEUE_NAME ?? 'hookline-example',
  onError: (error) => console.error(`[bullmq] ${error.message}`),
});

export const receiver = createReceiver({
  secret,
  store: redisStore({ client, prefix: process.env.REDIS_PREFIX ?? 'hookline-example:' }),
  queue,
});

// A slow handler: far too slow to run inside the service's 30 s if it were a real backlog, fine here.
receiver.on('*', async (delivery) => {
  await new Promise((resolve) => setTimeout(resolve, handlerMs));
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});
receiver.onError((error, info) => {
  console.error(`[${info.phase}] ${info.delivery?.deliveryId ?? ''} ${error instanceof Error ? error.message : String(error)}`);
});
