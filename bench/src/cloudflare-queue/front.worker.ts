/**
 * The accepting Worker of the cloudflare-queue suite, bundled by suite.ts and run in workerd through
 * miniflare: POST /sync serves a receiver in synchronous mode (the Durable Object store, a no-op
 * handler), POST /queue one in queue mode (the same store, cloudflareQueue() on a queue with no
 * consumer, so a round measures accepting alone), POST /fill enqueues the jobs in its body on the queue
 * the consumer Worker drains.
 */
import { cloudflareQueue, type DurableObjectNamespaceLike, durableObjectStore, type QueueBindingLike } from '@hookline/cloudflare';
import { createReceiver, type Receiver } from '@hookline/core';
import type { QueuedDelivery } from '@hookline/core/adapter';

export { HooklineStoreObject } from '@hookline/cloudflare';

interface Env {
  WEBHOOK_SECRET: string;
  HOOKLINE_STORE: DurableObjectNamespaceLike;
  ACCEPTED: QueueBindingLike;
  JOBS: QueueBindingLike;
}

let sync: Receiver | undefined;
let queued: Receiver | undefined;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === '/sync') {
      sync ??= createReceiver({
        secret: env.WEBHOOK_SECRET,
        store: durableObjectStore({ client: env.HOOKLINE_STORE, name: 'bench-sync' }),
      }).on('*', () => {});
      return sync.fetch(request);
    }
    if (path === '/queue') {
      queued ??= createReceiver({
        secret: env.WEBHOOK_SECRET,
        store: durableObjectStore({ client: env.HOOKLINE_STORE, name: 'bench-queue' }),
        queue: cloudflareQueue(env.ACCEPTED, { client: env.HOOKLINE_STORE, name: 'bench-accepted-jobs' }),
      }).on('*', () => {});
      return queued.fetch(request);
    }
    if (path === '/fill') {
      const queue = cloudflareQueue(env.JOBS, { client: env.HOOKLINE_STORE, name: 'bench-jobs' });
      const jobs = (await request.json()) as QueuedDelivery[];
      await Promise.all(jobs.map((job) => queue.enqueue(job)));
      return Response.json(jobs.length);
    }
    return new Response('not found', { status: 404 });
  },
};
