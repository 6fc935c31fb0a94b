// What the exactly-once tests of the SQLite store and of Redis Cluster add to harness.ts: a receiver
// process from a script of their own (harness.ts starts receiver-process.ts, which knows the Redis and
// Postgres stores only), and the process side those scripts share.
import http from 'node:http';
import { createNodeHandler, createReceiver, type IdempotencyStore } from '@hookline/core';
import pg from 'pg';
import { type ReceiverProcess, startReceiver } from './harness';

/** Starts `node --import tsx --conditions=@hookline/source <script>` and waits until it listens. */
export function startReceiverScript(script: string, env: Record<string, string>): Promise<ReceiverProcess> {
  return startReceiver(env, script);
}

/** Reads a required environment variable of a receiver script. */
export const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`receiver script: ${name} is not set`);
  return value;
};

/**
 * The process side, as receiver-process.ts has it: the node:http bridge over `store`, and a handler
 * that records each successful run in Postgres (RECORDS_URL, RECORDS_TABLE). Prints
 * {"listening":port}, then {"started":deliveryId,"attempt":n} whenever a handler starts; delivery data
 * `failFirst` throws on attempt 1, `hangFirst` never returns on attempt 1.
 */
export function serveReceiver(store: IdempotencyStore): void {
  const records = new pg.Pool({ connectionString: env('RECORDS_URL'), max: 2, options: '-c synchronous_commit=off' });
  records.on('error', () => {});
  const recordsTable = env('RECORDS_TABLE');
  const receiver = createReceiver({ secret: env('WEBHOOK_SECRET'), store, leaseMs: Number(env('LEASE_MS')), deadlineMs: 5_000 });
  receiver.onError((error, info) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stdout.write(
      `${JSON.stringify({ error: message, phase: info.phase, deliveryId: info.delivery?.deliveryId, at: Date.now() })}\n`,
    );
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
}
