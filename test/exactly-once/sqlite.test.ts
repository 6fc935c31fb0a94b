// Exactly-once across 3 receiver processes on one machine sharing one SQLite file: the store's
// locking is SQLite's own (WAL, busy timeout), not a server's.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DATABASE_URL, requirePostgres } from '../support/servers';
import { createRecords, type ReceiverProcess } from './harness';
import { crashMidHandler, exactlyOnceUnderConcurrency } from './scenarios';
import { startReceiverScript } from './sqlite-harness';

const server = await requirePostgres(); // the handlers record their runs there
const run = randomUUID().replaceAll('-', '').slice(0, 12);

describe.skipIf(!server.reachable)('exactly once across processes: SQLite store (one file, one machine)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookline-sqlite-eo-'));
  let records: Awaited<ReturnType<typeof createRecords>>;
  let receivers: ReceiverProcess[] = [];
  const env = (leaseMs = 30_000) => ({
    SQLITE_FILE: join(dir, 'hookline.db'),
    RECORDS_URL: DATABASE_URL,
    RECORDS_TABLE: records.table,
    WEBHOOK_SECRET: 'whsec_exactly_once_test',
    LEASE_MS: String(leaseMs),
  });

  beforeAll(async () => {
    records = await createRecords(DATABASE_URL, `hookline_eo_sqlite_${run}`);
    receivers = await Promise.all([0, 1, 2].map(() => startReceiverScript('sqlite-receiver.ts', env())));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await records?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('handles 300 deliveries, each posted 3 times at once to 3 processes, exactly once', async () => {
    await exactlyOnceUnderConcurrency(receivers, records, 300);
  }, 120_000);

  it('a process killed mid-handler: after its lease expires the next attempt completes the delivery', async () => {
    const victim = await startReceiverScript('sqlite-receiver.ts', env(1_500));
    try {
      await crashMidHandler(victim, receivers, records);
    } finally {
      await victim.stop();
    }
  }, 60_000);
});
