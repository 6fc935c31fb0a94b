// pgBossQueue() against the queue conformance suite of @hookline/testing, on the shared PostgreSQL: this
// file's own pg-boss schema, dropped afterwards, and a queue of its own per test.
import { randomUUID } from 'node:crypto';
import { requireServer } from '@hookline/testing';
import { describeQueueConformance } from '@hookline/testing/conformance';
import pg from 'pg';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe } from 'vitest';
import { jobIdFor } from './job-id';
import { type PgBossDeliveryQueue, pgBossQueue } from './pg-boss-queue';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_conformance_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
let owner: PgBossDeliveryQueue;
let boss: PgBoss;
let made = 0;

describe.skipIf(!server.reachable)('pgBossQueue', () => {
  beforeAll(async () => {
    owner = pgBossQueue({
      connectionString: DATABASE_URL,
      name: 'conformance-owner',
      bossOptions: { schema, supervise: false, schedule: false, max: 6 },
      onError: () => {},
    });
    boss = await owner.boss();
  });
  afterAll(async () => {
    await owner?.close();
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  describeQueueConformance('pgBossQueue', ({ attempts, retryDelayMs }) => {
    const name = `conformance-${++made}`;
    // pg-boss counts retry delays in whole seconds.
    const options = { boss, name, schema, attempts, backoff: { type: 'fixed', delayMs: retryDelayMs } } as const;
    const open = () => pgBossQueue({ ...options, pollingIntervalMs: 50, onError: () => {} });
    const queue = open();
    return {
      queue,
      another: open,
      async addCorruptJob(deliveryId) {
        // jsonb refuses text that is not JSON: the corrupt job pg-boss can hold is JSON of the wrong shape.
        await queue.boss();
        await boss.send(name, { delivery: { deliveryId } }, { id: jobIdFor(deliveryId), retryLimit: attempts - 1 });
      },
    };
  });
});
