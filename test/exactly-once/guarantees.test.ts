// Handler-level guarantees across 3 receiver processes (guarantees-receiver.ts): per-handler completion
// on the Redis and the Postgres store, and transactional handlers on the Postgres store (a process
// SIGKILLed with its transaction open; a crowd with failures, checked by a primary key that must
// never refuse a row). Short by default; HOOKLINE_LONG=1 runs the full sizes.
import { randomUUID } from 'node:crypto';
import { postgresStore } from '@hookline/postgres';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, requirePostgres, requireRedis } from '../support/servers';
import { deliver, newDeliveryId, pool, type ReceiverProcess, SECRET, signedDelivery, startReceiver } from './harness';

const LONG = process.env.HOOKLINE_LONG === '1';
const [redisServer, postgresServer] = [await requireRedis(), await requirePostgres()];
const run = randomUUID().replaceAll('-', '').slice(0, 12);
const SCRIPT = 'guarantees-receiver.ts';
const isOk = (status: number) => status >= 200 && status < 300;

/** Each delivery posted 3 times at once to 3 processes, each copy retried on any non-2xx. */
async function crowd(
  receivers: ReceiverProcess[],
  ids: string[],
  data: (id: string) => Record<string, unknown>,
  onOk?: (id: string) => Promise<void>,
) {
  const ports = () => receivers.map((r) => r.port);
  const statuses = new Map<number, number>();
  await pool(ids, 40, async (id, index) => {
    const delivery = signedDelivery(id, data(id));
    await Promise.all(
      [0, 1, 2].map((copy) =>
        deliver(ports, index + copy, delivery, async (status) => {
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (isOk(status)) await onOk?.(id);
        }),
      ),
    );
  });
  return statuses;
}

for (const storeKind of ['redis', 'postgres'] as const) {
  const reachable = redisServer.reachable && postgresServer.reachable;
  describe.skipIf(!reachable)(`per-handler completion across processes: ${storeKind} store`, () => {
    const recordsSchema = `hookline_eo_hg_${storeKind}_${run}`;
    const storeSchema = `hookline_eo_hgs_${run}`;
    const prefix = `hookline-eo-hg-${run}:`;
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    const table = `"${recordsSchema}".guarantee_runs`;
    let receivers: ReceiverProcess[] = [];

    beforeAll(async () => {
      await admin.query(`CREATE SCHEMA "${recordsSchema}"`);
      await admin.query(
        `CREATE TABLE ${table} (delivery_id text, handler text, runs integer NOT NULL, PRIMARY KEY (delivery_id, handler))`,
      );
      if (storeKind === 'postgres') await postgresStore({ client: admin, schema: storeSchema }).setup();
      const env = {
        MODE: 'handlers',
        STORE: storeKind,
        STORE_URL: storeKind === 'redis' ? REDIS_URL : DATABASE_URL,
        STORE_PREFIX: prefix,
        STORE_SCHEMA: storeSchema,
        RECORDS_URL: DATABASE_URL,
        RECORDS_TABLE: table,
        WEBHOOK_SECRET: SECRET,
        LEASE_MS: '30000',
      };
      receivers = await Promise.all([0, 1, 2].map(() => startReceiver(env, SCRIPT)));
    });
    afterAll(async () => {
      await Promise.all(receivers.map((r) => r.stop()));
      await admin.query(`DROP SCHEMA IF EXISTS "${recordsSchema}" CASCADE`);
      if (storeKind === 'postgres') await admin.query(`DROP SCHEMA IF EXISTS "${storeSchema}" CASCADE`);
      await admin.end();
      if (storeKind === 'redis') {
        const redis = await createClient({ url: REDIS_URL }).connect();
        for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 1_000 })) if (keys.length > 0) await redis.unlink(keys);
        await redis.close();
      }
    });

    it(`${LONG ? 500 : 120} deliveries, 3 copies each at once: handlers one and two ran once, three (failing on attempts 1-2 of half of them) three times`, async () => {
      const ids = Array.from({ length: LONG ? 500 : 120 }, newDeliveryId);
      const failing = new Set(ids.filter((_, i) => i % 2 === 0));
      const premature: string[] = [];
      const statuses = await crowd(
        receivers,
        ids,
        (id) => ({ failThree: failing.has(id) }),
        async (id) => {
          // A 2xx means every handler is done: all three have their runs recorded.
          const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE delivery_id = $1`, [id]);
          if ((rows[0] as { n: number }).n !== 3) premature.push(id);
        },
      );
      const { rows } = await admin.query(`SELECT delivery_id, handler, runs FROM ${table} WHERE delivery_id = ANY($1)`, [ids]);
      const runs = new Map<string, Record<string, number>>();
      for (const row of rows as { delivery_id: string; handler: string; runs: number }[]) {
        runs.set(row.delivery_id, { ...runs.get(row.delivery_id), [row.handler]: row.runs });
      }
      const wrong = ids.filter((id) => {
        const r = runs.get(id);
        return r?.one !== 1 || r.two !== 1 || r.three !== (failing.has(id) ? 3 : 1);
      });
      if (wrong.length > 0) console.error('wrong runs:', JSON.stringify(wrong.slice(0, 5).map((id) => [id, runs.get(id)])));
      expect(wrong).toEqual([]);
      expect(premature).toEqual([]);
      expect(statuses.get(500) ?? 0).toBe(failing.size * 2);
    }, 120_000);
  });
}

describe.skipIf(!postgresServer.reachable)('transactional handlers across processes: Postgres store', () => {
  const storeSchema = `hookline_eo_tx_${run}`;
  const rowsTable = `"${storeSchema}".tx_rows`;
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  let receivers: ReceiverProcess[] = [];
  const env = (leaseMs: number) => ({
    MODE: 'transactional',
    STORE: 'postgres',
    STORE_URL: DATABASE_URL,
    STORE_SCHEMA: storeSchema,
    ROWS_TABLE: rowsTable,
    WEBHOOK_SECRET: SECRET,
    LEASE_MS: String(leaseMs),
  });
  const rowsOf = async (ids: string[]) =>
    (await admin.query(`SELECT delivery_id, pid, attempt FROM ${rowsTable} WHERE delivery_id = ANY($1)`, [ids])).rows as {
      delivery_id: string;
      attempt: number;
    }[];
  const storeState = async (key: string) =>
    (
      (await admin.query(`SELECT state FROM "${storeSchema}".hookline_idempotency WHERE key = $1`, [key])).rows[0] as
        | { state: string }
        | undefined
    )?.state;

  beforeAll(async () => {
    await postgresStore({ client: admin, schema: storeSchema }).setup();
    // The primary key is the proof: a second commit of a delivery's row would fail with 23505.
    await admin.query(`CREATE TABLE ${rowsTable} (delivery_id text PRIMARY KEY, pid integer NOT NULL, attempt integer NOT NULL)`);
    receivers = await Promise.all([0, 1, 2].map(() => startReceiver(env(30_000), SCRIPT)));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await admin.query(`DROP SCHEMA IF EXISTS "${storeSchema}" CASCADE`);
    await admin.end();
  });

  it('a process SIGKILLed after its insert, before the commit: neither the row nor a completion remains, and the retry runs it once', async () => {
    const victim = await startReceiver(env(1_500), SCRIPT);
    try {
      const id = newDeliveryId();
      const delivery = signedDelivery(id, { hangFirst: true });
      void fetch(`http://127.0.0.1:${victim.port}/webhooks`, { method: 'POST', body: delivery.body, headers: delivery.headers }).catch(
        () => {},
      );
      await victim.waitForLine((line) => line.inserted === id);
      expect(await rowsOf([id])).toEqual([]); // inserted, not committed
      victim.child.kill('SIGKILL');
      await victim.stop();
      expect(await rowsOf([id])).toEqual([]);
      expect(await storeState(`hookline:${id}`)).toBe('l');
      expect(await storeState(`hookline:${id}#insert`)).toBe('l');
      const statuses: number[] = [];
      await deliver(
        () => receivers.map((r) => r.port),
        0,
        delivery,
        (status) => void statuses.push(status),
      );
      expect(statuses[0]).toBe(409); // the dead process's lease was still live
      expect(statuses.at(-1)).toBe(200);
      // One row, committed by a later claim than the dead process's first: usually the second, but on a
      // loaded machine a survivor's claim may time out once more (503) before one commits.
      const rows = await rowsOf([id]);
      expect(rows, `answers: ${statuses.join(', ')}`).toMatchObject([{ delivery_id: id }]);
      expect(rows[0]?.attempt, `answers: ${statuses.join(', ')}`).toBeGreaterThanOrEqual(2);
      expect(receivers.flatMap((r) => r.lines).filter((line) => line.started === id)).toHaveLength(1);
      expect(await storeState(`hookline:${id}`)).toBe('c');
      expect(await storeState(`hookline:${id}#insert`)).toBe('c');
    } finally {
      await victim.stop();
    }
  }, 60_000);

  it(`3 processes × ${LONG ? 500 : 150} deliveries × 3 copies, 20% failing after their insert: exactly one row per delivery, the primary key never refusing one`, async () => {
    const ids = Array.from({ length: LONG ? 500 : 150 }, newDeliveryId);
    const failFirst = new Set(ids.filter(() => Math.random() < 0.2));
    const premature: string[] = [];
    const statuses = await crowd(
      receivers,
      ids,
      (id) => ({ failFirst: failFirst.has(id) }),
      async (id) => {
        if ((await rowsOf([id])).length !== 1) premature.push(id);
      },
    );
    const rows = await rowsOf(ids);
    expect(rows).toHaveLength(ids.length);
    expect(new Set(rows.map((r) => r.delivery_id)).size).toBe(ids.length);
    // The failed first attempts were rolled back: their rows are the retry's.
    expect(rows.filter((r) => failFirst.has(r.delivery_id)).every((r) => r.attempt === 2)).toBe(true);
    expect(premature).toEqual([]);
    const refused = receivers.flatMap((r) => r.lines).filter((line) => line.code === '23505');
    expect(refused).toEqual([]);
    expect(statuses.get(500) ?? 0).toBe(failFirst.size);
  }, 120_000);
});
