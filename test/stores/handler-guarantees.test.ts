// Handler-level guarantees on every shared store, in one process: per-handler completion
// (`completion: 'handler'`) and ordering guards (`on(…, { name, order })`), with two receivers sharing
// one store as two processes would. The multi-process versions are in test/exactly-once/.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReceiver, type IdempotencyStore, memoryStore, type Receiver, type ReceiverInput } from '@hookline/core';
import { mysqlStore } from '@hookline/mysql';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { type SqliteDatabaseLike, sqliteStore } from '@hookline/sqlite';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, requirePostgres, requireRedis, requireServer } from '../support/servers';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const hasNodeSqlite = (() => {
  try {
    return process.getBuiltinModule?.('node:sqlite') !== undefined;
  } catch {
    return false;
  }
})();
const [redisServer, postgresServer] = [await requireRedis(), await requirePostgres()];
const mysqlServer = await requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 });
const run = randomUUID().replaceAll('-', '').slice(0, 12);
const SECRET = 'whsec_handler_guarantees';
const quiet = () => {};
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function signed(event: string, data: Record<string, unknown>, deliveryId = `wdl_${randomUUID().replaceAll('-', '')}`): ReceiverInput {
  const body = Buffer.from(JSON.stringify({ event, timestamp: new Date().toISOString(), deliveryId, data }));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
      'x-service-event': event,
      'x-service-delivery-id': deliveryId,
    },
  };
}

/** Sends `input` like the service: to the receivers in turn, again after any non-2xx. Resolves the answers' statuses. */
async function deliver(receivers: Receiver[], input: ReceiverInput, start: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 200; attempt++) {
    const { status } = await receivers[(start + attempt) % receivers.length]!.handle(input);
    statuses.push(status);
    if (status >= 200 && status < 300) return statuses;
    await sleep(2 + Math.random() * 8);
  }
  throw new Error(`no 2xx in 200 attempts: ${statuses.join(' ')}`);
}

interface Target {
  name: string;
  reachable: boolean;
  open(): Promise<{ store: IdempotencyStore; close(): Promise<void> }>;
}

const redisPrefix = `hookline-hg-${run}:`;
const pgSchema = `hookline_hg_${run}`;
const mysqlTable = `hookline_hg_${run}`;
const targets: Target[] = [
  {
    name: 'memory',
    reachable: true,
    async open() {
      return { store: memoryStore(), close: async () => {} };
    },
  },
  {
    name: 'Redis',
    reachable: redisServer.reachable,
    async open() {
      const client = await createClient({ url: REDIS_URL }).connect();
      return { store: redisStore({ client, prefix: redisPrefix }), close: () => client.close() };
    },
  },
  {
    name: 'Postgres',
    reachable: postgresServer.reachable,
    async open() {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 6 });
      const store = postgresStore({ client: pool, schema: pgSchema });
      await store.setup();
      return { store, close: () => pool.end() };
    },
  },
  {
    name: 'SQLite',
    reachable: true,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'hookline-hg-'));
      // node:sqlite where the running Node has it (22.13+); better-sqlite3 on Node 20, whose binary is
      // built for the Node that installed it.
      const db = hasNodeSqlite ? undefined : new Database(join(dir, 'store.db'));
      const store =
        db === undefined
          ? sqliteStore({ filename: join(dir, 'store.db'), pruneEveryMs: 0 })
          : // better-sqlite3's typings declare run()'s parameters more loosely than the structural shape.
            sqliteStore({ client: db as unknown as SqliteDatabaseLike, pruneEveryMs: 0 });
      return {
        store,
        async close() {
          store.close();
          db?.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'MySQL',
    reachable: mysqlServer.reachable,
    async open() {
      const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 6 });
      const store = mysqlStore({ client: pool, table: mysqlTable });
      await store.setup();
      return {
        store,
        async close() {
          await pool.query(`DROP TABLE IF EXISTS \`${mysqlTable}\`, \`${mysqlTable}_versions\``);
          await pool.end();
        },
      };
    },
  },
];

afterAll(async () => {
  if (redisServer.reachable) {
    const admin = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of admin.scanIterator({ MATCH: `${redisPrefix}*`, COUNT: 1_000 })) if (keys.length > 0) await admin.unlink(keys);
    await admin.close();
  }
  if (postgresServer.reachable) {
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await admin.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`);
    await admin.end();
  }
});

for (const target of targets) {
  describe.skipIf(!target.reachable)(`handler-level guarantees: ${target.name} store`, () => {
    let opened: Awaited<ReturnType<Target['open']>>;
    beforeAll(async () => {
      opened = await target.open();
    });
    afterAll(() => opened?.close());

    it("completion: 'handler': with the third handler failing on attempts 1 and 2, one and two ran once, three ran three times", async () => {
      const runs = new Map<string, { one: number; two: number; three: number }>();
      // Two receivers on one store, as two processes; the deliveries alternate between them.
      const receivers = [0, 1].map(() => {
        const receiver = createReceiver({ secret: SECRET, store: opened.store, completion: 'handler' }).onError(quiet);
        const count = (id: string, name: 'one' | 'two' | 'three') => {
          const entry = runs.get(id) ?? { one: 0, two: 0, three: 0 };
          entry[name]++;
          runs.set(id, entry);
        };
        receiver.on('message.delivered', (d) => count(d.deliveryId, 'one'), { name: 'one' });
        receiver.on('message.delivered', (d) => count(d.deliveryId, 'two'), { name: 'two' });
        receiver.on(
          'message.delivered',
          (d, context) => {
            count(d.deliveryId, 'three');
            if (context.attempt <= 2) throw new Error(`planned failure on attempt ${context.attempt}`);
          },
          { name: 'three' },
        );
        return receiver;
      });
      const inputs = Array.from({ length: 20 }, (_, i) => signed('message.delivered', { messageId: `msg_${i}` }));
      // Three concurrent copies of each delivery, each retried on any non-2xx.
      const answers = await Promise.all(inputs.flatMap((input, i) => [0, 1, 2].map((copy) => deliver(receivers, input, i + copy))));
      expect([...runs.values()]).toEqual(inputs.map(() => ({ one: 1, two: 1, three: 3 })));
      expect(answers.flat().filter((status) => status === 500)).toHaveLength(inputs.length * 2);
      // Afterwards every copy is a duplicate.
      for (const input of inputs) expect(await receivers[0]!.handle(input)).toMatchObject({ status: 200 });
      expect([...runs.values()].every((r) => r.one === 1 && r.two === 1 && r.three === 3)).toBe(true);
    });

    it('ordering guard: 200 deliveries of 10 keys at once in random order, with retries: each key sees strictly increasing versions and ends on its highest', async () => {
      const KEYS = 10;
      const VERSIONS = 20;
      const seen = new Map<string, number[]>();
      const state = new Map<string, number>();
      let staleHooks = 0;
      let runsCount = 0;
      const failOnce = new Set<string>();
      const receivers = [0, 1].map(() => {
        const receiver = createReceiver({ secret: SECRET, store: opened.store, hooks: { stale: () => void staleHooks++ } }).onError(quiet);
        receiver.on(
          'line.status_changed',
          async (d) => {
            const data = d.data as unknown as { lineId: string; version: number; fail: boolean };
            runsCount++;
            await sleep(Math.random() * 3);
            // A tenth fail once: the version must stay where it was, and the retry may find itself stale.
            if (data.fail && !failOnce.has(d.deliveryId)) {
              failOnce.add(d.deliveryId);
              throw new Error('transient');
            }
            seen.set(data.lineId, [...(seen.get(data.lineId) ?? []), data.version]);
            state.set(data.lineId, data.version);
          },
          {
            name: 'line-status',
            order: {
              key: (d) => String((d.data as { lineId?: unknown }).lineId),
              version: (d) => Number((d.data as { version?: unknown }).version),
            },
          },
        );
        return receiver;
      });
      const line = (k: number) => `lin_${run}_${k}`;
      const inputs = Array.from({ length: KEYS * VERSIONS }, (_, i) =>
        signed('line.status_changed', { lineId: line(i % KEYS), version: Math.floor(i / KEYS) + 1, fail: Math.random() < 0.1 }),
      ).sort(() => Math.random() - 0.5);
      await Promise.all(inputs.map((input, i) => deliver(receivers, input, i)));

      for (let k = 0; k < KEYS; k++) {
        const versions = seen.get(line(k)) ?? [];
        expect(versions.length, line(k)).toBeGreaterThan(0);
        for (let i = 1; i < versions.length; i++)
          expect(versions[i]!, `${line(k)}: ${versions.join(' ')}`).toBeGreaterThan(versions[i - 1]!);
        expect(state.get(line(k))).toBe(VERSIONS);
      }
      // Every delivery either ran to success once or was answered as stale without running.
      const succeeded = [...seen.values()].reduce((sum, v) => sum + v.length, 0);
      expect(succeeded + staleHooks).toBe(KEYS * VERSIONS);
      expect(runsCount).toBe(succeeded + failOnce.size);

      // A stale delivery, sent now: answered 200, the handler does not run.
      const before = runsCount;
      const stale = await receivers[1]!.handle(signed('line.status_changed', { lineId: line(0), version: 3, fail: false }));
      expect(stale.status).toBe(200);
      expect(runsCount).toBe(before);
      expect(staleHooks).toBe(KEYS * VERSIONS - succeeded + 1);
    });

    it("ordering guard: a handler running for three leases keeps its resource's lock, and a newer delivery waits for it", async () => {
      // Two processes, a 600 ms lease (renewed every 200 ms), a handler of 1.8 s.
      const receivers = [0, 1].map(() =>
        createReceiver({ secret: SECRET, store: opened.store, completion: 'handler', leaseMs: 600 }).onError(quiet),
      );
      const lineId = `lin_${run}_long`;
      const events: string[] = [];
      for (const receiver of receivers) {
        receiver.on(
          'line.status_changed',
          async (d) => {
            events.push(`start ${d.data.version}`);
            if (d.data.version === 1) await sleep(1_800);
            events.push(`end ${d.data.version}`);
          },
          { name: 'long-status', order: { key: (d) => String(d.data.lineId), version: (d) => Number(d.data.version) } },
        );
      }
      const older = receivers[0]!.handle(signed('line.status_changed', { lineId, version: 1 }));
      await sleep(1_000); // past the lease, well before the handler's end
      const newer = signed('line.status_changed', { lineId, version: 2 });
      const busy = await receivers[1]!.handle(newer);
      expect(busy.status).toBe(409);
      expect(JSON.parse(busy.body).error.details).toMatchObject({ reason: 'resource_busy' });
      expect((await older).status).toBe(200);
      expect((await deliver(receivers, newer, 1)).at(-1)).toBe(200);
      expect(events).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
    });
  });
}
