// examples/queue-bullmq and examples/queue-pg-boss run as a user starts them (a web process and a
// worker process): a signed delivery is answered 202 queued before its slow handler ran, the worker
// runs it once, a repeat is a duplicate, and SIGTERM lets the running job finish before exiting.
import { randomUUID } from 'node:crypto';
import { jobIdFor as bullmqJobId } from '@hookline/bullmq';
import { jobIdFor as pgBossJobId, pgBossQueue } from '@hookline/pg-boss';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATABASE_URL, REDIS_URL, requirePostgres, requireRedis } from '../support/servers';
import { deleteExampleData, exampleQueue } from './support/bullmq-example-data';
import { expectQueuedThenHandledOnce, post } from './support/answer-fast';
import { EXAMPLE_SECRET, type RunningExample, startExample } from './support/run-example';

const [redis, postgres] = await Promise.all([requireRedis(), requirePostgres()]);
const run = randomUUID().replace(/-/g, '').slice(0, 10);
const HANDLER_MS = '1500';

interface Backend {
  name: 'queue-bullmq' | 'queue-pg-boss';
  reachable: boolean;
  env: Record<string, string>;
  /** The job's state in the queue ('active', 'completed', …). */
  state(deliveryId: string): Promise<string | undefined>;
  cleanup(): Promise<void>;
}

function bullmq(): Backend {
  const queueName = `hookline-example-smoke-${run}`;
  const prefix = `hookline-example-smoke-${run}:`;
  const queue = exampleQueue(queueName);
  return {
    name: 'queue-bullmq',
    reachable: redis.reachable,
    env: { REDIS_URL, QUEUE_NAME: queueName, REDIS_PREFIX: prefix, HANDLER_MS },
    state: async (deliveryId) => queue.queue.getJobState(bullmqJobId(deliveryId)),
    cleanup: () => deleteExampleData(queue, prefix),
  };
}

function pgBoss(): Backend {
  const bossSchema = `hookline_example_boss_${run}`;
  const storeSchema = `hookline_example_store_${run}`;
  const queueName = 'hookline-example';
  const queue = pgBossQueue({
    connectionString: DATABASE_URL,
    name: queueName,
    bossOptions: { schema: bossSchema, supervise: false, schedule: false, max: 2 },
  });
  return {
    name: 'queue-pg-boss',
    reachable: postgres.reachable,
    env: { DATABASE_URL, QUEUE_NAME: queueName, BOSS_SCHEMA: bossSchema, STORE_SCHEMA: storeSchema, POLL_MS: '100', HANDLER_MS },
    state: async (deliveryId) => (await (await queue.boss()).getJobById(queueName, pgBossJobId(deliveryId)))?.state,
    async cleanup() {
      await queue.close();
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await pool.query(`DROP SCHEMA IF EXISTS ${bossSchema} CASCADE`);
      await pool.query(`DROP SCHEMA IF EXISTS ${storeSchema} CASCADE`);
      await pool.end();
    },
  };
}

for (const backend of [bullmq(), pgBoss()]) {
  describe.skipIf(!backend.reachable)(`examples/${backend.name}`, () => {
    let example: RunningExample | undefined;
    beforeAll(async () => {
      example = await startExample(backend.name, { env: backend.env });
    }, 120_000);
    afterAll(async () => {
      await example?.stop();
      await backend.cleanup();
    }, 60_000);

    it('answers 202 queued before the handler ran, runs it once in the worker, and answers a repeat as a duplicate', async () => {
      const running = example as RunningExample;
      await expectQueuedThenHandledOnce(running);
    }, 30_000);

    it('finishes the running job on SIGTERM before the worker exits', async () => {
      const running = example as RunningExample;
      const payload = createSignedPayload(createDelivery('call.completed', { durationSeconds: 7 }), EXAMPLE_SECRET);
      const deliveryId = payload.headers['x-service-delivery-id'] as string;
      expect((await post(running.url, payload)).status).toBe(202);
      await vi.waitFor(async () => expect(await backend.state(deliveryId)).toBe('active'), { timeout: 10_000, interval: 50 });
      // SIGTERM to the whole group: pnpm may be gone at once, but the worker finishes its job first
      // (its line still reaches the pipe it inherited) and records it as completed.
      await running.stop();
      await vi.waitFor(
        () => expect(running.lines().filter((line) => line.deliveryId === deliveryId)).toEqual([{ event: 'call.completed', deliveryId }]),
        {
          timeout: 10_000,
          interval: 50,
        },
      );
      await vi.waitFor(async () => expect(await backend.state(deliveryId)).toBe('completed'), { timeout: 10_000, interval: 50 });
    }, 30_000);
  });
}
