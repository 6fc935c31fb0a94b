/**
 * The consumer Worker of the cloudflare-queue suite: queueConsumer() with a receiver on the Durable
 * Object store and a no-op handler that counts its runs (GET / answers the count). Each batch first
 * asks the suite (NODE service binding) whether draining is open: the suite fills the queue while it is
 * shut, so a round times the drain alone.
 */
import {
  cloudflareQueue,
  type DurableObjectNamespaceLike,
  durableObjectStore,
  type MessageBatchLike,
  type QueueBindingLike,
  queueConsumer,
} from '@hookline/cloudflare';
import { createReceiver } from '@hookline/core';

interface Env {
  WEBHOOK_SECRET: string;
  HOOKLINE_STORE: DurableObjectNamespaceLike;
  JOBS: QueueBindingLike;
  NODE: { fetch(input: string): Promise<Response> };
}

let handled = 0;
let consume: ((batch: MessageBatchLike) => Promise<void>) | undefined;

export default {
  async queue(batch: MessageBatchLike, env: Env): Promise<void> {
    await (await env.NODE.fetch('http://node/gate')).arrayBuffer();
    if (consume === undefined) {
      const queue = cloudflareQueue(env.JOBS, { client: env.HOOKLINE_STORE, name: 'bench-jobs' });
      const receiver = createReceiver({
        secret: env.WEBHOOK_SECRET,
        store: durableObjectStore({ client: env.HOOKLINE_STORE, name: 'bench-work' }),
        queue,
      }).on('*', () => {
        handled += 1;
      });
      consume = queueConsumer(receiver, { queue });
    }
    await consume(batch);
  },
  fetch(): Response {
    return Response.json({ handled });
  },
};
