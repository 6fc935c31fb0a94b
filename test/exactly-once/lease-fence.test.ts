// The handler's fence across processes, on the Redis and the Postgres store: a receiver process is
// paused with SIGSTOP while its handler runs, for longer than leaseMs; a second process takes the
// delivery over, writes and completes it; then the first is continued (fenced-receiver.ts).
// - A handler that honours its signal finds it aborted with a LeaseLostError and writes nothing.
// - A handler that ignores it, but writes conditionally on its fencing token, is refused by the write:
//   the second run's token is larger. Either way the second run's row stands.
import { randomUUID } from 'node:crypto';
import { postgresStore } from '@hookline/postgres';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, requirePostgres, requireRedis } from '../support/servers';
import { newDeliveryId, type ReceiverProcess, SECRET, signedDelivery, sleep, startReceiver } from './harness';

const [redisServer, postgresServer] = [await requireRedis(), await requirePostgres()];
const run = randomUUID().replaceAll('-', '').slice(0, 12);
const LEASE_MS = 1_000;

for (const storeKind of ['redis', 'postgres'] as const) {
  describe.skipIf(!redisServer.reachable || !postgresServer.reachable)(`a paused holder's fence: ${storeKind} store`, () => {
    const schema = `hookline_fence_${storeKind}_${run}`;
    const prefix = `hookline-fence-${run}:`;
    const table = `"${schema}".fenced_writes`;
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    let paused: ReceiverProcess;
    let other: ReceiverProcess;

    beforeAll(async () => {
      await admin.query(`CREATE SCHEMA "${schema}"`);
      await admin.query(`CREATE TABLE ${table} (delivery_id text PRIMARY KEY, fence integer NOT NULL, writer text NOT NULL)`);
      if (storeKind === 'postgres') await postgresStore({ client: admin, schema }).setup();
      const env = {
        STORE: storeKind,
        STORE_URL: storeKind === 'redis' ? REDIS_URL : DATABASE_URL,
        STORE_PREFIX: prefix,
        STORE_SCHEMA: schema,
        RECORDS_URL: DATABASE_URL,
        FENCE_TABLE: table,
        WEBHOOK_SECRET: SECRET,
        LEASE_MS: String(LEASE_MS),
      };
      [paused, other] = await Promise.all([startReceiver(env, 'fenced-receiver.ts'), startReceiver(env, 'fenced-receiver.ts')]);
    }, 60_000);

    afterAll(async () => {
      for (const receiver of [paused, other]) {
        if (receiver?.child.signalCode === null && receiver.child.exitCode === null) receiver.child.kill('SIGCONT');
      }
      await Promise.all([paused?.stop(), other?.stop()]);
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      if (storeKind === 'redis') {
        const redis = await createClient({ url: REDIS_URL }).connect();
        for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 1_000 })) if (keys.length > 0) await redis.unlink(keys);
        await redis.close();
      }
    });

    /** Starts the delivery on `paused`, pauses it past its lease, has `other` take it over, then continues `paused`. */
    async function takeOverWhilePaused(data: Record<string, unknown>) {
      const deliveryId = newDeliveryId();
      const delivery = signedDelivery(deliveryId, data);
      const send = (to: ReceiverProcess) =>
        fetch(`http://127.0.0.1:${to.port}/webhooks`, { method: 'POST', body: delivery.body, headers: delivery.headers }).then(
          (response) => response.status,
        );
      const firstAnswer = send(paused);
      await paused.waitForLine((line) => line.started === deliveryId && line.token === 1);
      paused.child.kill('SIGSTOP');
      try {
        await sleep(LEASE_MS * 1.5); // its last renewal was at most leaseMs / 3 before the pause
        expect(await send(other)).toBe(200);
        expect(await other.waitForLine((line) => line.ended === deliveryId)).toMatchObject({ token: 2, written: true });
      } finally {
        paused.child.kill('SIGCONT');
      }
      const ended = await paused.waitForLine((line) => line.ended === deliveryId, 15_000);
      const { rows } = await admin.query(`SELECT fence, writer FROM ${table} WHERE delivery_id = $1`, [deliveryId]);
      return { ended, row: rows[0] as { fence: number; writer: string }, firstAnswer: await firstAnswer };
    }

    it('a handler that honours its signal finds it aborted with a LeaseLostError once continued, and writes nothing', async () => {
      const { ended, row, firstAnswer } = await takeOverWhilePaused({ mode: 'honours' });
      expect(ended).toMatchObject({ token: 1, aborted: true, leaseLost: true });
      expect(ended.reason).toMatch(/lost the lease on wdl_\w+ while its handlers ran/);
      expect(row).toEqual({ fence: 2, writer: `pid${other.child.pid}` });
      expect(firstAnswer).toBe(500); // it stopped by throwing its signal's reason
    }, 60_000);

    it('a handler that ignores its signal but fences its write with context.fencingToken is refused by the write', async () => {
      const { ended, row } = await takeOverWhilePaused({ mode: 'fenced', holdMs: LEASE_MS * 2.5 });
      expect(ended).toMatchObject({ token: 1, written: false, aborted: true });
      expect(row).toEqual({ fence: 2, writer: `pid${other.child.pid}` });
    }, 60_000);
  });
}
