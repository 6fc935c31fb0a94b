// examples/queue-bullmq's start-up: its Redis client has no offline queue, so a command sent before
// the connection is ready fails. Both processes therefore wait for Redis before they take work: a
// delivery that arrives first is never answered 503, and a Redis that is not there ends the example
// with a message naming REDIS_URL. The Redis behind the proxy is the shared one; only the proxy is
// stalled, and the queue and keys this test wrote are deleted after it.
import { randomUUID } from 'node:crypto';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port';
import { REDIS_URL, requireRedis } from '../support/servers';
import { startStallingProxy } from '../stores/support/stalling-proxy';
import { deleteExampleData, exampleQueue } from './support/bullmq-example-data';
import { EXAMPLE_SECRET, startExample } from './support/run-example';

const redis = await requireRedis();
const run = randomUUID().replace(/-/g, '').slice(0, 10);
const queueName = `hookline-example-startup-${run}`;
const prefix = `hookline-example-startup-${run}:`;
const STALL_MS = 1_500;

describe.skipIf(!redis.reachable)('examples/queue-bullmq start-up', () => {
  afterAll(() => deleteExampleData(exampleQueue(queueName), prefix), 30_000);

  it('a Redis slow to answer at start-up: the web process listens only once it is ready, so the first delivery is queued (202), not refused (503)', async () => {
    const target = new URL(REDIS_URL);
    const proxy = await startStallingProxy(target.hostname, Number(target.port || 6379));
    proxy.stall();
    const resumed = new Promise<void>((resolve) =>
      setTimeout(() => {
        proxy.resume();
        resolve();
      }, STALL_MS),
    );
    const env = { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, QUEUE_NAME: queueName, REDIS_PREFIX: prefix, HANDLER_MS: '10' };
    try {
      const example = await startExample('queue-bullmq', { env });
      try {
        await resumed;
        const payload = createSignedPayload(createDelivery('message.delivered'), EXAMPLE_SECRET);
        const response = await fetch(example.url, {
          method: 'POST',
          headers: payload.headers,
          body: typeof payload.body === 'string' ? payload.body : new Uint8Array(payload.body),
        });
        expect({ status: response.status, body: await response.json() }).toEqual({ status: 202, body: { ok: true, queued: true } });
        const deliveryId = payload.headers['x-service-delivery-id'] as string;
        expect(await example.lineFor(deliveryId)).toEqual({ event: 'message.delivered', deliveryId });
      } finally {
        await example.stop();
      }
    } finally {
      await resumed;
      await proxy.close();
    }
  }, 60_000);

  it('no Redis at REDIS_URL: the example exits within its 10 s bound, saying to check REDIS_URL', async () => {
    const nothing = `redis://127.0.0.1:${await freePort()}`;
    // Started after all (the bound is missing): stop it, and fail on the undefined below.
    const refusal = await startExample('queue-bullmq', { env: { REDIS_URL: nothing, QUEUE_NAME: queueName, REDIS_PREFIX: prefix } }).then(
      (example) => example.stop().then(() => undefined),
      (error: Error) => error.message,
    );
    expect(refusal).toContain(`Redis at ${nothing} was not ready within 10 s: check REDIS_URL and that Redis runs.`);
  }, 60_000);
});
