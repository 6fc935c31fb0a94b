// Exactly-once across 3 receiver processes sharing the Redis store (issue 4).
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, requirePostgres, requireRedis } from '../support/servers';
import { startOwnRedis } from '../support/own-redis';
import { createRecords, startReceiver, type ReceiverProcess } from './harness';
import { crashMidHandler, exactlyOnceUnderConcurrency, storeOutage } from './scenarios';

const servers = [await requireRedis(), await requirePostgres()];
const run = randomUUID().replaceAll('-', '').slice(0, 12);

describe.skipIf(servers.some((s) => !s.reachable))('exactly once across processes: Redis store', () => {
  let records: Awaited<ReturnType<typeof createRecords>>;
  let receivers: ReceiverProcess[] = [];
  // A production-like lease for the crowd; the crash test's victim takes a short one.
  const env = (storeUrl: string, leaseMs = 30_000) => ({
    STORE: 'redis',
    STORE_URL: storeUrl,
    STORE_PREFIX: `hookline-eo-${run}:`,
    RECORDS_URL: DATABASE_URL,
    RECORDS_TABLE: records.table,
    WEBHOOK_SECRET: 'whsec_exactly_once_test',
    LEASE_MS: String(leaseMs),
  });

  beforeAll(async () => {
    records = await createRecords(DATABASE_URL, `hookline_eo_redis_${run}`);
    receivers = await Promise.all([0, 1, 2].map(() => startReceiver(env(REDIS_URL))));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await records?.drop();
    // The records the receivers left in the shared Redis (completions live 72 h otherwise).
    const admin = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of admin.scanIterator({ MATCH: `hookline-eo-${run}:*`, COUNT: 1_000 })) {
      if (keys.length > 0) await admin.unlink(keys);
    }
    await admin.close();
  });

  it('handles 1,000 deliveries, each posted 3 times at once to 3 processes, exactly once', async () => {
    await exactlyOnceUnderConcurrency(receivers, records);
  }, 120_000);

  it('a process killed mid-handler: after its lease expires the next attempt completes the delivery', async () => {
    const victim = await startReceiver(env(REDIS_URL, 1_500));
    try {
      await crashMidHandler(victim, receivers, records);
    } finally {
      await victim.stop();
    }
  }, 60_000);

  it('Redis stopped mid-run: 503 and no handler runs; once it is back, all complete exactly once', async () => {
    // A private redis-server on a free port (the shared one is never stopped), with an append-only
    // file so the stop and restart keep the records, as a production Redis would.
    const redis = await startOwnRedis({ appendOnly: true });
    const own = await Promise.all([0, 1, 2].map(() => startReceiver(env(redis.url))));
    try {
      await storeOutage(own, records, redis.stop, redis.start);
    } finally {
      await Promise.all(own.map((r) => r.stop()));
      await redis.close();
    }
  }, 120_000);
});
