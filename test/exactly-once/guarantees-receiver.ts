// One receiver process of the handler-level guarantee tests (guarantees.test.ts): node:http bridge, a
// shared Redis or Postgres store, and MODE's handlers. Prints {"listening":port} once, then
// {"started":deliveryId,"handler":name,"attempt":n} whenever a handler starts.
//
// MODE=handlers: `completion: 'handler'` with three handlers, `one`, `two` and `three`; each records its
//   run in RECORDS_TABLE (a row per delivery and handler, a run counter); `three` throws on attempts
//   1 and 2 when the delivery's data says `failThree`.
// MODE=transactional (Postgres): one transactional handler inserting the delivery's row into
//   ROWS_TABLE (its primary key is the delivery id: a second insert would fail) through
//   `context.transaction`; `failFirst` throws after the insert on attempt 1, `hangFirst` never returns
//   on attempt 1 (the test SIGKILLs the process while the transaction is open).
import http from 'node:http';
import { createNodeHandler, createReceiver, type IdempotencyStore } from '@hookline/core';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`guarantees-receiver: ${name} is not set`);
  return value;
};
const FAST_COMMIT = '-c synchronous_commit=off';
const mode = env('MODE');

let store: IdempotencyStore;
if (env('STORE') === 'redis') {
  const client = new Redis(env('STORE_URL'), { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 100 });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  store = redisStore({ client, prefix: env('STORE_PREFIX') });
} else {
  const pool = new pg.Pool({ connectionString: env('STORE_URL'), max: 5, connectionTimeoutMillis: 15_000, options: FAST_COMMIT });
  pool.on('error', () => {});
  await pool.query('SELECT 1');
  store = postgresStore({ client: pool, schema: env('STORE_SCHEMA') });
}

const receiver = createReceiver({
  secret: env('WEBHOOK_SECRET'),
  store,
  leaseMs: Number(env('LEASE_MS')),
  deadlineMs: 5_000,
  completion: mode === 'handlers' ? 'handler' : 'delivery',
});
receiver.onError((error, info) => {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  process.stdout.write(`${JSON.stringify({ error: message, code, phase: info.phase, deliveryId: info.delivery?.deliveryId })}\n`);
});
const started = (deliveryId: string, handler: string, attempt: number) =>
  process.stdout.write(`${JSON.stringify({ started: deliveryId, handler, attempt })}\n`);

if (mode === 'handlers') {
  const records = new pg.Pool({ connectionString: env('RECORDS_URL'), max: 2, options: FAST_COMMIT });
  records.on('error', () => {});
  const table = env('RECORDS_TABLE');
  const record = (deliveryId: string, handler: string) =>
    records.query(
      `INSERT INTO ${table} AS r (delivery_id, handler, runs) VALUES ($1, $2, 1)
       ON CONFLICT (delivery_id, handler) DO UPDATE SET runs = r.runs + 1`,
      [deliveryId, handler],
    );
  for (const name of ['one', 'two', 'three']) {
    receiver.on(
      '*',
      async (delivery, context) => {
        started(delivery.deliveryId, name, context.attempt);
        await record(delivery.deliveryId, name);
        if (name === 'three' && (delivery.data as { failThree?: boolean }).failThree && context.attempt <= 2) {
          throw new Error(`planned failure of three on attempt ${context.attempt}`);
        }
      },
      { name },
    );
  }
} else {
  const table = env('ROWS_TABLE');
  receiver.on(
    '*',
    async (delivery, context) => {
      const data = delivery.data as { failFirst?: boolean; hangFirst?: boolean };
      started(delivery.deliveryId, 'insert', context.attempt);
      await (context.transaction as pg.PoolClient).query(`INSERT INTO ${table} (delivery_id, pid, attempt) VALUES ($1, $2, $3)`, [
        delivery.deliveryId,
        process.pid,
        context.attempt,
      ]);
      if (data.hangFirst && context.attempt === 1) {
        process.stdout.write(`${JSON.stringify({ inserted: delivery.deliveryId })}\n`);
        await new Promise(() => {});
      }
      if (data.failFirst && context.attempt === 1) throw new Error('planned failure after the insert');
    },
    { name: 'insert', transactional: true },
  );
}

const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ listening: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
