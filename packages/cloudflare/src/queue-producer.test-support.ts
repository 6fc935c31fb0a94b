// The accepting Worker the queue tests run in workerd (through miniflare): the receiver in answer-fast
// mode at POST /webhooks (the Durable Object store, the E2E queue), and cloudflareQueue()'s producer
// methods at POST /queue/<method> for any of the test queues, so the conformance suite can call them
// from Node. It defines the object class both Workers bind (the store's, inspectable). Not published.
import { createReceiver, type Receiver } from '@hookline/core';
import type { QueueBindingLike } from './cloudflare-queue';
import { type DurableObjectNamespaceLike, durableObjectStore } from './durable-object-store';
import type { JobRequest } from './job-protocol';
import { E2E_QUEUE, queueOf, type TestQueueSettings } from './queue-test-queues.test-support';

import { type DurableObjectStateLike, HooklineStoreObject } from './store-object';

/** The store's object, plus what its storage holds about a key (POST /inspect: every storage key that contains it). */
export class InspectableStoreObject extends HooklineStoreObject {
  readonly #state: DurableObjectStateLike;

  constructor(state: DurableObjectStateLike, env: unknown) {
    super(state, env);
    this.#state = state;
  }

  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/inspect') return super.fetch(request);
    const { key } = (await request.json()) as { key: string };
    return Response.json([...(await this.#state.storage.list({})).keys()].filter((entry) => entry.includes(key)));
  }
}

interface Env {
  WEBHOOK_SECRET: string;
  HOOKLINE_STORE: DurableObjectNamespaceLike;
  [binding: string]: unknown;
}

let receiver: Receiver | undefined;

/** Made on the first request: bindings arrive with it. No handler runs here: the consumer Worker runs them. */
function receiverFor(env: Env): Receiver {
  receiver ??= createReceiver({
    secret: env.WEBHOOK_SECRET,
    store: durableObjectStore({ client: env.HOOKLINE_STORE, shards: 4 }),
    queue: queueOf(env, E2E_QUEUE),
  }).on('*', () => {
    throw new Error('handlers run in the consumer Worker');
  });
  return receiver;
}

async function queueCall(env: Env, method: string, request: Request): Promise<Response> {
  const { settings, job, limit, ref, body } = (await request.json()) as {
    settings: TestQueueSettings;
    job?: never;
    limit?: number;
    ref?: never;
    body?: string;
  };
  const queue = queueOf(env, settings);
  try {
    if (method === 'enqueue') return Response.json({ result: await queue.enqueue(job as never) });
    if (method === 'dead-letters') return Response.json({ result: await queue.deadLetters(limit === undefined ? {} : { limit }) });
    if (method === 'replay') return Response.json({ result: await queue.replay(ref as never) });
    if (method === 'replay-all') return Response.json({ result: await queue.replayAll() });
    if (method === 'body-limit') return Response.json({ result: await queue.bodyLimitBytes?.() });
    if (method === 'work') return Response.json({ result: queue.work(async () => ({ status: 'done' }), { concurrency: 1 }) });
    // A message cloudflareQueue() did not write, as a foreign producer (or a corrupted one) would.
    if (method === 'raw') {
      await (env[settings.binding] as QueueBindingLike).send(body as string, { contentType: 'text' });
      return Response.json({ result: true });
    }
    return Response.json({ error: `unknown method ${method}` }, { status: 404 });
  } catch (error) {
    const { code } = error as { code?: unknown };
    return Response.json({ error: error instanceof Error ? error.message : String(error), code }, { status: 500 });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === '/webhooks') return receiverFor(env).fetch(request);
    if (pathname.startsWith('/queue/') && request.method === 'POST') return queueCall(env, pathname.slice('/queue/'.length), request);
    if (pathname === '/job' && request.method === 'POST') {
      // A job operation sent to one object as it is (`{ name, shard, request }`), for the record rules' tests.
      const { name, shard, request: job } = (await request.json()) as { name: string; shard: number; request: JobRequest };
      const stub = env.HOOKLINE_STORE.get(env.HOOKLINE_STORE.idFromName(`${name}:${shard}`));
      return stub.fetch('https://hookline-store/job', { method: 'POST', body: JSON.stringify(job) });
    }
    if (pathname === '/inspect' && request.method === 'POST') {
      const { name, shard, key } = (await request.json()) as { name: string; shard: number; key: string };
      const stub = env.HOOKLINE_STORE.get(env.HOOKLINE_STORE.idFromName(`${name}:${shard}`));
      return stub.fetch('https://hookline-store/inspect', { method: 'POST', body: JSON.stringify({ key }) });
    }
    return new Response('not found', { status: 404 });
  },
};
