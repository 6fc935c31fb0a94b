// One process of the answer-fast soak test: ROLE=web (node:http bridge, verifies and enqueues) or
// ROLE=worker (runs the handlers), on BACKEND=bullmq (store and queue on our own Redis) or
// BACKEND=pg-boss (store and queue on PostgreSQL through the test's TCP proxy). The handler takes a
// little while, fails the first run of every fifth delivery, throws PermanentFailure for deliveries
// whose data says so, and otherwise records its success in Postgres (directly, not through the proxy)
// under a unique key; a re-run that finds the row already there is recorded apart, with its attempt.
// Env: ROLE, BACKEND, SECRET, DATABASE_URL, SOAK_TABLE, QUEUE_NAME, PORT (web), REDIS_PORT (bullmq),
// PROXY_URL, BOSS_SCHEMA, STORE_SCHEMA (pg-boss).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { bullmqQueue } from '@hookline/bullmq';
import { createNodeHandler, createReceiver, EVENT_NAMES, type IdempotencyStore, PermanentFailure } from '@hookline/core';
import type { DeliveryQueue } from '@hookline/core/adapter';
import { pgBossQueue } from '@hookline/pg-boss';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`queue-process: ${name} is not set`);
  return value;
};
const role = env('ROLE');
const table = env('SOAK_TABLE');
if (!/^[a-z0-9_]+$/.test(table)) throw new Error('queue-process: bad table name');
const queueName = env('QUEUE_NAME');
const quiet = () => {};

const results = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 4 });
results.on('error', quiet);

let store: IdempotencyStore;
let queue: DeliveryQueue;
if (env('BACKEND') === 'bullmq') {
  const port = Number(env('REDIS_PORT'));
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => 100 });
  client.on('error', quiet); // reconnects by itself; operations in between fail and are retried
  store = redisStore({ client, prefix: `${table}:` });
  queue = bullmqQueue({
    connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null, retryStrategy: () => 100 },
    name: queueName,
    attempts: 12,
    backoff: { type: 'exponential', delayMs: 200 },
    commandTimeoutMs: 2_000,
    // A SIGKILLed worker's jobs come back after 3 s instead of 30 s.
    worker: { lockDuration: 3_000, stalledInterval: 1_000, drainDelay: 1 },
    onError: quiet,
  });
} else {
  const proxied = env('PROXY_URL');
  const pool = new pg.Pool({ connectionString: proxied, max: 4, connectionTimeoutMillis: 2_000, query_timeout: 3_000 });
  pool.on('error', quiet);
  store = postgresStore({ client: pool, schema: env('STORE_SCHEMA') });
  queue = pgBossQueue({
    connectionString: proxied,
    name: queueName,
    bossOptions: { schema: env('BOSS_SCHEMA'), max: 4, maintenanceIntervalSeconds: 1, connectionTimeoutMillis: 2_000 } as never,
    attempts: 10,
    backoff: { type: 'exponential', delayMs: 1_000 },
    // A SIGKILLed worker's jobs come back after 3 s (pg-boss's maintenance expires them).
    expireInMs: 3_000,
    pollingIntervalMs: 100,
    commandTimeoutMs: 2_000,
    onError: quiet,
  });
}

// A 2 s lease, so a SIGKILLed worker's claim lapses soon after its job comes back.
const receiver = createReceiver({ secret: env('SECRET'), store, queue, leaseMs: 2_000 });
receiver.onError(quiet); // the injected failures are expected; the test counts outcomes in Postgres

const failsFirst = (deliveryId: string) => (createHash('sha1').update(deliveryId).digest()[0] as number) % 5 === 0;

// Every catalogue event, but not '*': a job for an event outside it must end in the dead letters.
receiver.on([...EVENT_NAMES], async (delivery, context) => {
  await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 130));
  if ((delivery.data as { permanent?: unknown }).permanent === true) throw new PermanentFailure('soak: this delivery can never succeed');
  if (context.attempt === 1 && failsFirst(delivery.deliveryId)) throw new Error('injected failure of the first run');
  const inserted = await results.query(
    `INSERT INTO ${table} (delivery_id, attempt, pid) VALUES ($1, $2, $3) ON CONFLICT (delivery_id) DO NOTHING`,
    [delivery.deliveryId, context.attempt, process.pid],
  );
  if (inserted.rowCount === 0) {
    await results.query(`INSERT INTO ${table}_reruns (delivery_id, attempt, pid) VALUES ($1, $2, $3)`, [
      delivery.deliveryId,
      context.attempt,
      process.pid,
    ]);
  }
});

if (role === 'worker') {
  receiver.work({ concurrency: 8 });
  process.stdout.write('ready\n');
} else {
  const server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  server.keepAliveTimeout = 1_000;
  server.listen(Number(env('PORT')), '127.0.0.1', () => process.stdout.write('ready\n'));
}
