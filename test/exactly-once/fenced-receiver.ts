// A receiver process whose handler writes one row per delivery in Postgres (RECORDS_URL,
// FENCE_TABLE: delivery_id, fence, writer), for the lease-fence test: the test pauses this process
// with SIGSTOP past LEASE_MS while the handler runs, lets another process take the delivery over,
// then continues it. Store: STORE, STORE_URL, STORE_PREFIX / STORE_SCHEMA (store-from-env.ts).
// Prints {"listening":port}, then {"started":deliveryId,"token":n} when a handler starts and
// {"ended":deliveryId,"token":n,...} with what it did. Delivery data `mode` steers the first run
// (token 1); a later run writes at once.
//   honours: waits (up to 8 s) for its signal, and writes only if it was never aborted;
//   fenced:  ignores its signal, waits `holdMs`, then writes conditionally on its fencing token.
import http from 'node:http';
import { createNodeHandler, createReceiver, LeaseLostError } from '@hookline/core';
import pg from 'pg';
import { env } from './sqlite-harness';
import { storeFromEnv } from './store-from-env';

const records = new pg.Pool({ connectionString: env('RECORDS_URL'), max: 2 });
records.on('error', () => {});
const table = env('FENCE_TABLE');
const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The fenced write: it lands only over a row written under a smaller token (or none). */
async function write(deliveryId: string, token: number): Promise<boolean> {
  const { rowCount } = await records.query(
    `INSERT INTO ${table} AS t (delivery_id, fence, writer) VALUES ($1, $2, $3)
     ON CONFLICT (delivery_id) DO UPDATE SET fence = EXCLUDED.fence, writer = EXCLUDED.writer WHERE t.fence < EXCLUDED.fence`,
    [deliveryId, token, `pid${process.pid}`],
  );
  return rowCount === 1;
}

const receiver = createReceiver({
  secret: env('WEBHOOK_SECRET'),
  store: await storeFromEnv(),
  leaseMs: Number(env('LEASE_MS')),
  logger: false,
});
receiver.onError(() => {});
receiver.on('message.delivered', async ({ deliveryId, data }, { fencingToken: token, signal }) => {
  print({ started: deliveryId, token });
  const { mode, holdMs } = data as { mode?: 'honours' | 'fenced'; holdMs?: number };
  if (token === 1 && mode === 'honours') {
    const until = Date.now() + 8_000;
    while (!signal.aborted && Date.now() < until) await sleep(20);
    const reason = signal.reason as unknown;
    print({
      ended: deliveryId,
      token,
      aborted: signal.aborted,
      leaseLost: LeaseLostError.is(reason),
      reason: reason instanceof Error ? reason.message : String(reason),
    });
    signal.throwIfAborted();
  } else if (token === 1 && mode === 'fenced') {
    await sleep(holdMs ?? 0);
  }
  const written = await write(deliveryId, token);
  print({ ended: deliveryId, token, written, aborted: signal.aborted });
});

const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  print({ listening: typeof address === 'object' && address ? address.port : 0 });
});
process.on('SIGTERM', () => process.exit(0));
