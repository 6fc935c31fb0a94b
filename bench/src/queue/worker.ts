/**
 * One worker process of the queue suite: `tsx worker.ts <backend> <queue> <prefixOrSchema> <jobs> <concurrency> [handlerMs]`.
 * Enqueues nothing. Runs `receiver.work()` over the backend's store (Redis for bullmq, PostgreSQL for
 * pg-boss, each job's claim and completion included) with a handler that takes `handlerMs` (0, the
 * default: a no-op) until `jobs` handler runs, then prints `{"jobs":N,"ms":T}` (from the first job to
 * the last). With `jobs` 0 it runs until the suite sends "exit" over IPC (the worker that consumes the
 * queue while the time to 2xx is measured), printing `{"port":0}` once it is consuming.
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

const [backend, queueName = '', scope = '', jobs = '1000', concurrency = '16', handlerMs = '0'] = process.argv.slice(2);
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
  const postgres = postgresStore({ client: pool, schema: `${scope}_store` });
  await postgres.setup();
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
const delay = Number(handlerMs);
let done = 0;
let first = 0;
let last = 0;
const finished = new Promise<void>((resolve) => {
  receiver.on('*', async () => {
    if (done === 0) first = performance.now();
    if (delay > 0) await new Promise((wait) => setTimeout(wait, delay));
    last = performance.now();
    if (++done === target) resolve();
  });
  process.on('message', (message) => {
    if (message === 'exit') resolve();
  });
});
if (target > 0) {
  // A run that cannot finish (a job failing for good) ends the process instead of the suite hanging.
  setTimeout(() => {
    process.stderr.write(`worker.ts: only ${done} of ${target} jobs ran within 120 s\n`);
    process.exit(1);
  }, 120_000).unref();
}
const worker = receiver.work({ concurrency: Number(concurrency) });
if (target === 0) process.stdout.write(`${JSON.stringify({ port: 0 })}\n`);
await finished;
await worker.close();
await queue.close();
for (const close of closers) await close();
// Exits rather than waiting for the IPC channel to close.
process.stdout.write(`${JSON.stringify({ jobs: done, ms: last - first })}\n`, () => process.exit(0));
