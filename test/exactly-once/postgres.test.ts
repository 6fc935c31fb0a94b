// Exactly-once across 3 receiver processes sharing the Postgres store (issue 4). The processes reach
// the store through a TCP proxy the test can cut; handlers record their runs over a direct connection.
import { randomUUID } from 'node:crypto';
import { postgresStore } from '@hookline/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DATABASE_URL, requirePostgres } from '../support/servers';
import { createRecords, startProxy, startReceiver, type ReceiverProcess } from './harness';
import { crashMidHandler, exactlyOnceUnderConcurrency, storeOutage } from './scenarios';

const server = await requirePostgres();
const run = randomUUID().replaceAll('-', '').slice(0, 12);

describe.skipIf(!server.reachable)('exactly once across processes: Postgres store', () => {
  const storeSchema = `hookline_eo_store_${run}`;
  let records: Awaited<ReturnType<typeof createRecords>>;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let receivers: ReceiverProcess[] = [];
  let env: (leaseMs?: number) => Record<string, string>;

  beforeAll(async () => {
    records = await createRecords(DATABASE_URL, `hookline_eo_pg_${run}`);
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await postgresStore({ client: admin, schema: storeSchema }).setup();
    await admin.end();
    const target = new URL(DATABASE_URL);
    proxy = await startProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(DATABASE_URL);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    env = (leaseMs = 30_000) => ({
      STORE: 'postgres',
      STORE_URL: viaProxy.toString(),
      STORE_SCHEMA: storeSchema,
      RECORDS_URL: DATABASE_URL,
      RECORDS_TABLE: records.table,
      WEBHOOK_SECRET: 'whsec_exactly_once_test',
      LEASE_MS: String(leaseMs), // production-like for the crowd; the crash test's victim takes a short one
    });
    receivers = await Promise.all([0, 1, 2].map(() => startReceiver(env())));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await proxy?.close();
    await records?.admin.query(`DROP SCHEMA IF EXISTS "${storeSchema}" CASCADE`);
    await records?.drop();
  });

  it('handles 1,000 deliveries, each posted 3 times at once to 3 processes, exactly once', async () => {
    await exactlyOnceUnderConcurrency(receivers, records);
  }, 120_000);

  it('the connection to Postgres cut mid-run: 503 and no handler runs; once back, all complete exactly once', async () => {
    await storeOutage(
      receivers,
      records,
      async () => proxy.cut(),
      async () => proxy.restore(),
    );
  }, 120_000);

  it('a process killed mid-handler: after its lease expires the next attempt completes the delivery', async () => {
    const victim = await startReceiver(env(1_500));
    try {
      await crashMidHandler(victim, receivers, records);
    } finally {
      await victim.stop();
    }
  }, 60_000);
});
