/**
 * The receiver both processes share: the same secret, the same PostgreSQL store and the same pg-boss
 * queue. The web process (src/web.ts) only verifies, records and enqueues; the worker (src/worker.ts)
 * runs these handlers. Handlers are registered in both (the web process checks that a handler exists
 * before it enqueues), so keep them in one module like this one.
 *
 * Environment: WEBHOOK_SECRET (required), DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
 * QUEUE_NAME (default hookline-example), BOSS_SCHEMA (pg-boss's schema, default pgboss), STORE_SCHEMA
 * (the store table's schema, default the search_path's), POLL_MS (how often an idle worker looks for
 * jobs, default 2000) and HANDLER_MS, how long the stand-in handler takes (default 2000).
 */
import { createReceiver } from '@hookline/core';
import { pgBossQueue } from '@hookline/pg-boss';
import { postgresStore } from '@hookline/postgres';
import pg from 'pg';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const handlerMs = Number(process.env.HANDLER_MS ?? 2_000);

// The store's pool fails fast when PostgreSQL hangs or is gone: the receiver answers 503 and the
// service retries. pg-boss has a pool of its own, made from the same URL.
export const pool = new pg.Pool({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000, query_timeout: 3_000 });
pool.on('error', (error) => console.error(`[postgres] ${error.message}`));
const store = postgresStore({ client: pool, ...(process.env.STORE_SCHEMA ? { schema: process.env.STORE_SCHEMA } : {}) });
await store.setup();

export const queue = pgBossQueue({
  connectionString: databaseUrl,
  name: process.env.QUEUE_NAME ?? 'hookline-example',
  bossOptions: { schema: process.env.BOSS_SCHEMA ?? 'pgboss', max: 4 },
  pollingIntervalMs: Number(process.env.POLL_MS ?? 2_000),
  onError: (error) => console.error(`[pg-boss] ${error.message}`),
});
await queue.boss(); // start pg-boss (and create its schema and the queue) before taking requests

export const receiver = createReceiver({ secret, store, queue });

// A slow handler: far too slow to run inside the service's 30 s if it were a real backlog, fine here.
receiver.on('*', async (delivery) => {
  await new Promise((resolve) => setTimeout(resolve, handlerMs));
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});
receiver.onError((error, info) => {
  console.error(`[${info.phase}] ${info.delivery?.deliveryId ?? ''} ${error instanceof Error ? error.message : String(error)}`);
});
