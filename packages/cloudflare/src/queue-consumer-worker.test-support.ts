// The consumer Worker the queue tests run in workerd (through miniflare). Its queue() handler:
// - the E2E queue: queueConsumer() with a receiver of its own on the Durable Object store, whose handlers
//   report each run to Node (the NODE service binding) and behave as the delivery's `data.note` says;
// - the conformance queues: cloudflareQueue().consume() with a processor that hands each job to Node,
//   where the suite's processors (or receivers) run it: the suite drives push consumption from Node;
// - the CRASHING queue: throws without settling any message, as a consumer that crashes or runs past its
//   limits would, so Queues retries it and then moves it to its dead-letter queue (consumed here too).
// Not published.
import { createReceiver, PermanentFailure, type Receiver } from '@hookline/core';
import type { JobResult, QueueJob } from '@hookline/core/adapter';
import type { MessageBatchLike } from './cloudflare-queue';
import { type DurableObjectNamespaceLike, durableObjectStore } from './durable-object-store';
import { CRASHING_QUEUE, E2E_QUEUE, queueOf, type TestQueueSettings } from './queue-test-queues.test-support';
import { queueConsumer } from './queue-consumer';

interface Env {
  WEBHOOK_SECRET: string;
  HOOKLINE_STORE: DurableObjectNamespaceLike;
  NODE: { fetch(input: string, init?: RequestInit): Promise<Response> };
  [binding: string]: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function tellNode(env: Env, path: string, body: unknown): Promise<unknown> {
  const response = await env.NODE.fetch(`http://node/${path}`, { method: 'POST', body: JSON.stringify(body) });
  return response.json();
}

const failedOnce = new Set<string>();
let running = 0;
let receiver: Receiver | undefined;
let consume: ((batch: MessageBatchLike) => Promise<void>) | undefined;

function receiverFor(env: Env): Receiver {
  if (receiver !== undefined) return receiver;
  const made = createReceiver({
    secret: env.WEBHOOK_SECRET,
    store: durableObjectStore({ client: env.HOOKLINE_STORE, shards: 4 }),
    queue: queueOf(env, E2E_QUEUE),
  }).onError(() => {});
  made.on('message.delivered', async ({ deliveryId, data }, context) => {
    const note = (data as { note?: string }).note ?? '';
    await tellNode(env, 'e2e-run', { deliveryId, note, attempt: context.attempt });
    if (note === 'slow') await sleep(1_500);
    if (note === 'flaky' && !failedOnce.has(deliveryId)) {
      failedOnce.add(deliveryId);
      throw new Error('flaky: the first run fails');
    }
    if (note === 'permanent-once' && !failedOnce.has(deliveryId)) {
      failedOnce.add(deliveryId);
      throw new PermanentFailure('no such message (this time)');
    }
    if (note === 'always') throw new Error('always down');
  });
  // One line's deliveries never run at once: the others wait for it, without spending a try.
  made.on(
    'line.status_changed',
    async ({ deliveryId }, context) => {
      running += 1;
      const overlap = running > 1;
      await sleep(200);
      running -= 1;
      await tellNode(env, 'e2e-run', { deliveryId, note: 'ordered', attempt: context.attempt, overlap });
    },
    { name: 'status', order: { key: (delivery) => String((delivery.data as { lineId?: unknown }).lineId), stale: 'run' } },
  );
  receiver = made;
  return made;
}

/** Hands the job to Node's processor for `queue`; Node says what to do, or that no worker consumes it now. */
async function processInNode(env: Env, queue: string, job: QueueJob): Promise<JobResult> {
  const answer = (await tellNode(env, 'process', { queue, job })) as { result?: JobResult; error?: string; none?: boolean };
  if (answer.error !== undefined) throw new Error(answer.error);
  if (answer.none === true || answer.result === undefined) {
    return { status: 'wait', delayMs: 1_000, reason: 'no worker consumes this queue now' };
  }
  return answer.result;
}

export default {
  async queue(batch: MessageBatchLike, env: Env): Promise<void> {
    if (batch.queue === CRASHING_QUEUE) throw new Error('the consumer crashed before settling anything');
    if (batch.queue === 'e2e') {
      consume ??= queueConsumer(receiverFor(env), { queue: queueOf(env, E2E_QUEUE) });
      return consume(batch);
    }
    const settings = (await tellNode(env, 'settings', { queue: batch.queue })) as TestQueueSettings;
    await queueOf(env, settings).consume(batch, (job) => processInNode(env, batch.queue, job));
  },
};
