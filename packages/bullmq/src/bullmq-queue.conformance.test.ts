// bullmqQueue() against the queue conformance suite of @hookline/testing, on the shared Redis: every
// queue has a name of its own and is obliterated after its test.
import { randomUUID } from 'node:crypto';
import { requireServer } from '@hookline/testing';
import { describeQueueConformance } from '@hookline/testing/conformance';
import { Redis } from 'ioredis';
import { afterAll, describe } from 'vitest';
import { type BullmqDeliveryQueue, bullmqQueue } from './bullmq-queue';
import { jobIdFor } from './job-id';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const server = await requireServer('Redis', REDIS_URL);
const { hostname, port } = new URL(REDIS_URL);
const connection = { host: hostname, port: Number(port || 6379), maxRetriesPerRequest: null };
const run = `hookline-conformance-${randomUUID().slice(0, 8)}`;
// For writing a job hash as another client would.
const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
let made = 0;

afterAll(() => {
  redis.disconnect();
});

describe.skipIf(!server.reachable)('bullmqQueue', () => {
  describeQueueConformance('bullmqQueue', ({ attempts, retryDelayMs, visibilityTimeoutMs }) => {
    const name = `${run}-${++made}`;
    const handles: BullmqDeliveryQueue[] = [];
    const open = () => {
      const queue = bullmqQueue({
        connection,
        name,
        attempts,
        backoff: { type: 'fixed', delayMs: retryDelayMs },
        // BullMQ renews a job's lock while it runs: the suite's handlers run past a short one.
        worker: { drainDelay: 1, ...(visibilityTimeoutMs === undefined ? {} : { lockDuration: visibilityTimeoutMs }) },
        onError: () => {},
      });
      handles.push(queue);
      return queue;
    };
    const queue = open();
    return {
      queue,
      another: open,
      async addCorruptJob(deliveryId) {
        // A job as BullMQ stores it, whose data another client then overwrote with text that is not JSON.
        const delivery = { event: 'message.delivered', deliveryId, timestamp: new Date().toISOString(), data: {} };
        await queue.enqueue({ delivery, receivedAt: Date.now(), secretIndex: 0 });
        await redis.hset(queue.queue.toKey(jobIdFor(deliveryId)), 'data', '{"delivery":{"deliveryId":');
      },
      async cleanup() {
        await queue.queue.obliterate({ force: true }).catch(() => {});
        for (const handle of handles) await handle.close().catch(() => {});
      },
    };
  });
});
