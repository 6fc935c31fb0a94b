/**
 * One worker process of the queue suite: `tsx worker.ts <backend> <queue> <prefixOrSchema> <jobs> <concurrency>`.
 * Enqueues nothing: the suite filled the queue beforehand. Runs `receiver.work()` with a no-op handler
 * over the backend's store (Redis for bullmq, PostgreSQL for pg-boss, each job's claim and completion
 * included) until `jobs` handler runs, then prints `{"jobs":N,"ms":T}` (from the first job to the last).
 */
import { bullmqQueue } from '@hookline/bullmq';
import { createReceiver, type IdempotencyStore } from '@hookline/core';
import type { DeliveryQueue } from '@hookline/core/adapter';
import { pgBossQueue } from '@hookline/pg-boss';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { BENCH_SECRET } from '../lib/payloads';

const [backend, queueName = '', scope = '', jobs = '1000', concurrency = '16'] = process.argv.slice(2);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
let store: IdempotencyStore;
let queue: DeliveryQueue;
const closers: (() => unknown)[] = [];
if (backend === 'bullmq') {
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  closers.push(() => client.disconnect());
  store = redisStore({ client, prefix: scope });
  queue = bullmqQueue({ connection: { url: redisUrl, maxRetriesPerRequest: null }, name: queueName, worker: { drainDelay: 1 } });
} else {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  closers.push(() => pool.end());
  const postgres = postgresStore({ pool, schema: `${scope}_store` });
  await postgres.ensureSchema();
  store = postgres;
  queue = pgBossQueue({
    connectionString: databaseUrl,
    name: queueName,
    bossOptions: { schema: `${scope}_boss`, supervise: false, schedule: false, max: 10 },
    pollingIntervalMs: 100,
  });
}
const receiver = createReceiver({ secret: BENCH_SECRET, store, queue });
const target = Number(jobs);
let done = 0;
let first = 0;
const finished = new Promise<void>((resolve) => {
  receiver.on('*', () => {
    if (done === 0) first = performance.now();
    if (++done === target) resolve();
  });
});
// A run that cannot finish (a job failing for good) ends the process instead of the suite hanging.
setTimeout(() => {
  process.stderr.write(`worker.ts: only ${done} of ${target} jobs ran within 120 s\n`);
  process.exit(1);
}, 120_000).unref();
const worker = receiver.work({ concurrency: Number(concurrency) });
await finished;
const ms = performance.now() - first;
await worker.close();
await queue.close();
for (const close of closers) await close();
process.stdout.write(`${JSON.stringify({ jobs: done, ms })}\n`);
