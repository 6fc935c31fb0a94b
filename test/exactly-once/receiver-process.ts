// One receiver process of the exactly-once tests: node:http bridge, a shared Redis or Postgres store,
// and a handler that records each successful run in Postgres (a unique deliveryId and a run counter).
// Prints {"listening":port} once, then {"started":deliveryId,"attempt":n} whenever a handler starts.
//
// Delivery data steers the handler: `failFirst` throws on the store's attempt 1, `hangFirst` never
// returns on attempt 1 (the test SIGKILLs the process while it hangs).
import http from 'node:http';
import { createNodeHandler, createReceiver, type IdempotencyStore } from '@hookline/core';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`receiver-process: ${name} is not set`);
  return value;
};

// Few connections (the shared server allows 100 and other test files run meanwhile), and no wait for
// the WAL flush at commit: these tests are about concurrency and crashes of receivers, not of Postgres.
const FAST_COMMIT = '-c synchronous_commit=off';
const records = new pg.Pool({ connectionString: env('RECORDS_URL'), max: 2, options: FAST_COMMIT });
records.on('error', () => {});
const recordsTable = env('RECORDS_TABLE');

let store: IdempotencyStore;
if (env('STORE') === 'redis') {
  // Fail fast while Redis is away (503 at once, the service retries) and reconnect quickly.
  const client = new Redis(env('STORE_URL'), {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 100,
  });
  client.on('error', () => {});
  // Without the offline queue, commands before the first connection fail: listen once it is ready.
  await new Promise((resolve) => client.once('ready', resolve));
  store = redisStore({ client, prefix: env('STORE_PREFIX') });
} else {
  // A generous connect timeout: a pool-queue wait that times out makes `complete` fail after a
  // successful handler, and a completion the store never recorded can run again once the lease ends.
  // (A cut connection still fails at once: the proxy refuses it.)
  const pool = new pg.Pool({ connectionString: env('STORE_URL'), max: 6, connectionTimeoutMillis: 15_000, options: FAST_COMMIT });
  pool.on('error', () => {});
  await pool.query('SELECT 1');
  store = postgresStore({ pool, schema: env('STORE_SCHEMA') });
}

const receiver = createReceiver({
  secret: env('WEBHOOK_SECRET'),
  store,
  leaseMs: Number(env('LEASE_MS')),
  deadlineMs: 5_000,
});
// Failures are the point of these tests: report them as lines the test can show when it fails.
receiver.onError((error, info) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stdout.write(`${JSON.stringify({ error: message, phase: info.phase, deliveryId: info.delivery?.deliveryId, at: Date.now() })}\n`);
});

receiver.on('*', async (delivery, context) => {
  const data = delivery.data as { failFirst?: boolean; hangFirst?: boolean };
  process.stdout.write(`${JSON.stringify({ started: delivery.deliveryId, attempt: context.attempt })}\n`);
  if (data.hangFirst && context.attempt === 1) await new Promise(() => {});
  if (data.failFirst && context.attempt === 1) throw new Error('planned first-attempt failure');
  await records.query(
    `INSERT INTO ${recordsTable} AS r (delivery_id, runs, attempt, history) VALUES ($1, 1, $2, $3)
     ON CONFLICT (delivery_id) DO UPDATE SET runs = r.runs + 1, attempt = EXCLUDED.attempt, history = r.history || ' ' || EXCLUDED.history`,
    [delivery.deliveryId, context.attempt, `pid${process.pid}/attempt${context.attempt}`],
  );
});

const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ listening: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
