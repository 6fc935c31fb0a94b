import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import { describeStoreConformance } from '@hookline/testing/conformance';
import mysql from 'mysql2/promise';
import type { IdempotencyStore } from '@hookline/core';
import { afterAll, describe, expect, it } from 'vitest';
import { type MysqlStore, mysqlStore } from './mysql-store';
import { MAX_KEY_BYTES, SCHEMA_SQL, schemaSql } from './schema';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const server = await requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 });
// Every run has its own tables, so runs sharing one database never see each other's rows.
const run = randomUUID().replaceAll('-', '').slice(0, 12);
const table = `hookline_test_${run}`;
const created = new Set<string>([table]);

// Few connections: other test files use the same server at the same time.
const newPool = () => mysql.createPool({ uri: MYSQL_URL, connectionLimit: 8, connectTimeout: 5_000 });

/**
 * Sends every claim and every completion together with others on fresh keys, so the conformance
 * suite runs against the batch statements: operations that arrive in one turn of the event loop leave
 * together. A claim's batch also holds a key that has a row already (claimed again alone, as the key
 * under test may be) and a new one, before and after the key under test in turn. A completion's
 * decoy holds a lease of its own: when the completion under test is refused, fewer rows change than
 * were asked for and the store reads which.
 */
function alwaysBatched(store: MysqlStore): IdempotencyStore {
  let calls = 0;
  const decoy = (order = '') => `${order}decoy:wdl_${randomUUID()}`;
  return {
    async claim(key, token, leaseMs) {
      // '0' sorts before the suite's keys ('conformance-…'), '~' after.
      const [before, after] = calls++ % 2 === 0 ? ['0', '~'] : ['~', '0'];
      const [held, fresh] = [decoy(before), decoy(after)];
      await store.claim(held, 'held', 60_000);
      const [result, heldAnswer, freshAnswer] = await Promise.all([
        store.claim(key, token, leaseMs),
        store.claim(held, 'held', leaseMs),
        store.claim(fresh, 'decoy', leaseMs),
      ]);
      expect(heldAnswer.state).toBe('in_progress');
      expect(freshAnswer).toEqual({ state: 'acquired', attempt: 1 });
      return result;
    },
    async complete(key, token, retentionMs) {
      const held = decoy();
      await store.claim(held, 'decoy', 60_000);
      const [result, decoyDone] = await Promise.all([store.complete(key, token, retentionMs), store.complete(held, 'decoy', retentionMs)]);
      expect(decoyDone).toBe(true);
      return result;
    },
    release: (key, token) => store.release(key, token),
    extend: (key, token, leaseMs) => store.extend(key, token, leaseMs),
  };
}

/**
 * A pool that counts the statements sent through it (prepared or as text), by their first words, and
 * the most of each first word that ran at once.
 */
function countingPool(pool: mysql.Pool): {
  pool: mysql.Pool;
  sent: (prefix: string) => number;
  prepared: () => Set<string>;
  mostAtOnce: (verb: string) => number;
} {
  const sent: string[] = [];
  const prepared = new Set<string>();
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const counted = new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'execute' && property !== 'query') return Reflect.get(target, property, receiver);
      return async (options: { sql: string }, values: unknown[]) => {
        sent.push(options.sql);
        if (property === 'execute') prepared.add(options.sql);
        const verb = options.sql.trimStart().split(/\s/, 1)[0] as string;
        const now = (running.get(verb) ?? 0) + 1;
        running.set(verb, now);
        most.set(verb, Math.max(most.get(verb) ?? 0, now));
        try {
          return await (property === 'execute' ? target.execute(options, values as never) : target.query(options, values as never));
        } finally {
          running.set(verb, (running.get(verb) ?? 1) - 1);
        }
      };
    },
  });
  return {
    pool: counted,
    sent: (prefix) => sent.filter((text) => text.startsWith(prefix)).length,
    prepared: () => prepared,
    mostAtOnce: (verb) => most.get(verb) ?? 0,
  };
}

describe('schema', () => {
  it('ships schema.sql with the same text as SCHEMA_SQL', () => {
    expect(readFileSync(new URL('./schema.sql', import.meta.url), 'utf8')).toBe(SCHEMA_SQL);
  });

  it('refuses table and schema names that are not plain identifiers', () => {
    expect(() => schemaSql({ table: 'x`; DROP TABLE y; --' })).toThrow(/plain identifier/);
    expect(() => mysqlStore({ client: {} as never, schema: 'a.b' })).toThrow(/schema/);
  });

  it('names the new option when given an old one', () => {
    expect(() => mysqlStore({ pool: {} } as never)).toThrow(new TypeError('mysqlStore: `pool` is now `client`'));
    expect(() => mysqlStore({ client: {}, database: 'x' } as never)).toThrow(new TypeError('mysqlStore: `database` is now `schema`'));
  });
});

describe.skipIf(!server.reachable)('mysqlStore', () => {
  const admin = newPool();
  const store = (pool: mysql.Pool, extra: Partial<Parameters<typeof mysqlStore>[0]> = {}): MysqlStore =>
    mysqlStore({ client: pool, table, ...extra });
  afterAll(async () => {
    for (const name of created) await admin.query(`DROP TABLE IF EXISTS \`${name}\`, \`${name}_versions\``);
    await admin.end();
  });

  it('creates the table once, from several processes starting together', async () => {
    const pools = Array.from({ length: 4 }, newPool);
    await Promise.all(pools.map((pool) => store(pool).setup()));
    await Promise.all(pools.map((pool) => pool.end()));
    await store(admin).setup(); // again: nothing happens, nothing fails
    const [rows] = await admin.query(`SHOW INDEX FROM \`${table}\``);
    expect((rows as { Column_name: string }[]).map((r) => r.Column_name).sort()).toEqual(['k', 'purge_at']);
  });

  for (const prepared of [true, false]) {
    describeStoreConformance(
      `mysqlStore (${prepared ? 'prepared statements' : 'text statements'})`,
      () => {
        const pool = newPool();
        let ended = false;
        return {
          store: store(pool, { preparedStatements: prepared }),
          breakBackend: async () => {
            ended = true;
            await pool.end();
          },
          cleanup: async () => {
            if (!ended) await pool.end();
          },
        };
      },
      {
        ...(prepared ? { concurrency: 32 } : { rounds: 5 }),
        versions: true,
        // A table nobody created (setup() never ran); with text statements, a database nobody created.
        notSetUp: () => {
          const pool = newPool();
          const location = prepared ? { table: `${table}_never` } : { schema: `${table}_never` };
          return { store: mysqlStore({ client: pool, ...location, preparedStatements: prepared }), cleanup: () => pool.end() };
        },
      },
    );
  }

  describeStoreConformance(
    'mysqlStore (batched claims and completions)',
    () => {
      const pool = newPool();
      let ended = false;
      return {
        store: alwaysBatched(store(pool, { batchConcurrency: 1 })),
        breakBackend: async () => {
          ended = true;
          await pool.end();
        },
        cleanup: async () => {
          if (!ended) await pool.end();
        },
      };
    },
    {
      rounds: 5,
      notSetUp: () => {
        const pool = newPool();
        return { store: alwaysBatched(store(pool, { table: `${table}_never`, batchConcurrency: 1 })), cleanup: () => pool.end() };
      },
    },
  );

  it('sends completions that arrive together in fewer statements, each answered as its own', async () => {
    const pool = newPool();
    const { pool: counted, sent } = countingPool(pool);
    const s = store(counted);
    try {
      const keys = Array.from({ length: 200 }, (_, i) => `batch:${i}:wdl_${randomUUID()}`);
      const tokens = keys.map(() => randomUUID());
      await Promise.all(keys.map((key, i) => s.claim(key, tokens[i]!, 60_000)));
      const before = sent('UPDATE');
      // Half of them with the wrong token: only the owners' completions count.
      const completed = await Promise.all(keys.map((key, i) => s.complete(key, i % 2 === 0 ? tokens[i]! : randomUUID(), 60_000)));
      expect(completed).toEqual(keys.map((_, i) => i % 2 === 0));
      expect(sent('UPDATE') - before).toBeLessThan(keys.length / 4);
      const again = await Promise.all(keys.map((key) => s.claim(key, randomUUID(), 60_000)));
      expect(again.map((claim) => claim.state)).toEqual(keys.map((_, i) => (i % 2 === 0 ? 'completed' : 'in_progress')));
    } finally {
      await pool.end();
    }
  });

  it('runs four claim statements at once by default (they share the log flush), and never more than batchConcurrency', async () => {
    const claimStatementsAtOnce = async (extra: Partial<Parameters<typeof mysqlStore>[0]>) => {
      const pool = newPool();
      const counted = countingPool(pool);
      try {
        // 40 batches of 5 waiting at once: as many run as the store allows.
        const s = store(counted.pool, { maxBatchSize: 5, ...extra });
        const claims = await Promise.all(
          Array.from({ length: 200 }, (_, i) => s.claim(`concurrency:${i}:wdl_${randomUUID()}`, 'token', 60_000)),
        );
        expect(claims.every((claim) => claim.state === 'acquired')).toBe(true);
        return counted.mostAtOnce('INSERT');
      } finally {
        await pool.end();
      }
    };
    expect(await claimStatementsAtOnce({})).toBe(4);
    expect(await claimStatementsAtOnce({ batchConcurrency: 2 })).toBe(2);
  });

  it('sends claims that arrive together in fewer statements, each answered as it would be alone', async () => {
    const pool = newPool();
    const { pool: counted, sent, prepared } = countingPool(pool);
    const s = store(counted);
    const alone = store(admin, { maxBatchSize: 1 });
    try {
      const key = (label: string, i: number) => `claims:${label}:${i}:wdl_${randomUUID()}`;
      const fresh = Array.from({ length: 200 }, (_, i) => key('new', i));
      // Keys that have a row already, in every state, each with the answer a claim alone gets.
      type Expected = { key: string; token: string; answer: { state: string; [field: string]: unknown } };
      const existing: Expected[] = [];
      for (let i = 0; i < 10; i++) {
        const [live, own, done, released, expired] = ['live', 'own', 'done', 'released', 'expired'].map((label) => key(label, i));
        await alone.claim(live!, 'holder', 60_000);
        await alone.claim(own!, 'same-token', 60_000);
        await alone.claim(done!, 'finisher', 60_000);
        await alone.complete(done!, 'finisher', 60_000);
        await alone.claim(released!, 'quitter', 60_000);
        await alone.release(released!, 'quitter');
        await alone.claim(expired!, 'late', 1);
        existing.push(
          { key: live!, token: randomUUID(), answer: { state: 'in_progress', retryAfterMs: expect.any(Number) } },
          { key: own!, token: 'same-token', answer: { state: 'in_progress', retryAfterMs: expect.any(Number) } },
          { key: done!, token: randomUUID(), answer: { state: 'completed' } },
          { key: released!, token: randomUUID(), answer: { state: 'acquired', attempt: 2 } },
          { key: expired!, token: randomUUID(), answer: { state: 'acquired', attempt: 2 } },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 10)); // the 1 ms leases have ended
      // Every fourth new key is followed by one that had a row.
      const claims = fresh.flatMap((k, i): Expected[] => [
        { key: k, token: randomUUID(), answer: { state: 'acquired', attempt: 1 } },
        ...(i % 4 === 0 ? [existing[i / 4]!] : []),
      ]);
      const answers = await Promise.all(claims.map((c) => s.claim(c.key, c.token, 60_000)));
      expect(answers).toEqual(claims.map((c) => c.answer));
      // The new keys left in batches; each key that had a row was claimed again alone.
      expect(sent('INSERT')).toBeLessThan(fresh.length / 4 + existing.length * 2);
      // Each acquired lease is its claimer's, as if it had been claimed alone.
      const owners = claims.filter((c) => c.answer.state === 'acquired');
      expect(await Promise.all(owners.map((c) => s.complete(c.key, c.token, 60_000)))).toEqual(owners.map(() => true));
      const after = await Promise.all(claims.map((c) => alone.claim(c.key, randomUUID(), 60_000)));
      expect(after.map((a, i) => (claims[i]!.answer.state === 'acquired' ? a.state : 'skipped'))).toEqual(
        claims.map((c) => (c.answer.state === 'acquired' ? 'completed' : 'skipped')),
      );
      // Batches of many sizes went out, each padded to a power of two (or the most, 50), so the
      // connection prepared a few statements, not one per size: a server's max_prepared_stmt_count
      // is shared by every connection of every process.
      const rows = [...prepared()].filter((text) => text.startsWith('INSERT')).map((text) => text.split("(?, 'l', ?").length - 1);
      expect(rows).toContain(1);
      expect(rows.filter((n) => n > 1).length).toBeGreaterThan(0);
      for (const n of rows) expect([1, 2, 4, 8, 16, 32, 50]).toContain(n);
      expect(prepared().size).toBeLessThanOrEqual(3 + 3 * 7);
    } finally {
      await pool.end();
    }
  });

  it('answers a batch of 50 claims, the most one statement reports, each from its own row', async () => {
    const pool = newPool();
    const { pool: counted, sent } = countingPool(pool);
    const s = store(counted);
    try {
      const keys = Array.from({ length: 50 }, (_, i) => `full:${String(i).padStart(2, '0')}:wdl_${randomUUID()}`);
      // Every third key has a live lease already: rows with and without a row, at every bit position.
      for (const [i, k] of keys.entries()) if (i % 3 === 0) await s.claim(k, 'holder', 60_000);
      const before = sent('INSERT');
      const answers = await Promise.all(keys.map((k) => s.claim(k, randomUUID(), 60_000)));
      expect(answers.map((a) => a.state)).toEqual(keys.map((_, i) => (i % 3 === 0 ? 'in_progress' : 'acquired')));
      expect(answers.filter((a) => a.state === 'acquired')).toEqual(
        keys.filter((_, i) => i % 3 !== 0).map(() => ({ state: 'acquired', attempt: 1 })),
      );
      // One batch of 50, then the 17 keys that had a row, each alone.
      expect(sent('INSERT') - before).toBe(1 + 17);
    } finally {
      await pool.end();
    }
  });

  it('pads a batch to the next power of two with copies of its last row, which change nothing', async () => {
    const pool = newPool();
    const { pool: counted, prepared } = countingPool(pool);
    const s = store(counted);
    const rowsPerStatement = (verb: string, marker: string) =>
      [...prepared()].filter((text) => text.startsWith(verb)).map((text) => text.split(marker).length - 1);
    try {
      // 13 claims in one turn: 9 new keys and 4 with a live lease, one of them last in key order.
      const keys = Array.from({ length: 13 }, (_, i) => `pad:${String(i).padStart(2, '0')}:wdl_${randomUUID()}`);
      const tokens = keys.map(() => randomUUID());
      const held = new Set([0, 5, 7, 12]);
      for (const i of held) await s.claim(keys[i]!, 'holder', 60_000);
      const answers = await Promise.all(keys.map((k, i) => s.claim(k, tokens[i]!, 60_000)));
      expect(answers.map((a) => a.state)).toEqual(keys.map((_, i) => (held.has(i) ? 'in_progress' : 'acquired')));
      expect(rowsPerStatement('INSERT', "(?, 'l', ?").sort((a, b) => a - b)).toEqual([1, 16]);
      // 13 completions in one turn, the 4 held keys' with a token that is not theirs: one statement
      // of 16 pairs, then the read of which rows it completed, padded alike.
      const completed = await Promise.all(keys.map((k, i) => s.complete(k, tokens[i]!, 60_000)));
      expect(completed).toEqual(keys.map((_, i) => !held.has(i)));
      expect(rowsPerStatement('UPDATE', '(?, ?)')).toEqual([16]);
      expect(rowsPerStatement('SELECT', '?')).toEqual([17]);
      // The padding left the last key's lease its holder's.
      expect(await s.complete(keys[12]!, 'holder', 60_000)).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it('gives a brand-new key to exactly one of 64 claimers whose claims leave in batches from 4 pools', async () => {
    const pools = Array.from({ length: 4 }, newPool);
    const stores = pools.map((pool) => store(pool, { batchConcurrency: 1 }));
    try {
      for (let round = 0; round < 5; round++) {
        const key = `batch-race:${round}:wdl_${randomUUID()}`;
        // Each claimer also claims a key of its own at the same time, so the raced key shares batches.
        const results = await Promise.all(
          Array.from({ length: 64 }, async (_, i) => {
            const own = `batch-race:${round}:${i}:wdl_${randomUUID()}`;
            const [raced, mine] = await Promise.all([
              stores[i % 4]!.claim(key, randomUUID(), 60_000),
              stores[i % 4]!.claim(own, randomUUID(), 60_000),
            ]);
            expect(mine).toEqual({ state: 'acquired', attempt: 1 });
            return raced;
          }),
        );
        expect(results.filter((r) => r.state === 'acquired')).toEqual([{ state: 'acquired', attempt: 1 }]);
        expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(63);
      }
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('gives a brand-new key to exactly one of 64 claimers from 4 pools, 5 rounds (no lost or doubled lease, deadlocks retried)', async () => {
    const pools = Array.from({ length: 4 }, newPool);
    const stores = pools.map((pool) => store(pool));
    try {
      for (let round = 0; round < 5; round++) {
        const key = `race:${round}:wdl_${randomUUID()}`;
        const results = await Promise.all(Array.from({ length: 64 }, (_, i) => stores[i % 4]!.claim(key, randomUUID(), 60_000)));
        expect(results.filter((r) => r.state === 'acquired')).toEqual([{ state: 'acquired', attempt: 1 }]);
        expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(63);
      }
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('keeps expiry on the database clock, whatever the session time zone', async () => {
    const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1, timezone: '+00:00' });
    try {
      await pool.query("SET time_zone = '+09:30'");
      const s = store(pool);
      const key = `clock:wdl_${randomUUID()}`;
      await s.claim(key, 'a', 45_000);
      const [rows] = await pool.query(
        `SELECT state, attempt, expires_at - (UNIX_TIMESTAMP(NOW(3)) * 1000) AS left_ms FROM \`${table}\` WHERE k = ?`,
        [Buffer.from(key)],
      );
      const [row] = rows as { state: string; attempt: number; left_ms: string }[];
      expect(row?.state).toBe('l');
      expect(Number(row?.left_ms)).toBeGreaterThan(40_000);
      expect(Number(row?.left_ms)).toBeLessThanOrEqual(45_000);
    } finally {
      await pool.end();
    }
  });

  it('refuses keys it cannot hold as themselves with StoreDataError, and keeps the longest it can', async () => {
    const s = store(admin);
    await expect(s.claim(`bad:\uD800:${randomUUID()}`, 't', 60_000)).rejects.toSatisfy(StoreDataError.is);
    await expect(s.claim(`long:${'x'.repeat(MAX_KEY_BYTES)}`, 't', 60_000)).rejects.toSatisfy(StoreDataError.is);
    const longest = `${randomUUID()}:${'é'.repeat((MAX_KEY_BYTES - 37) / 2)}`;
    expect(Buffer.byteLength(longest)).toBe(MAX_KEY_BYTES - 1);
    expect(await s.claim(longest, 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
    expect(await s.claim(`${longest.slice(0, -1)}e`, 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
  });

  it('lets an owner finish past its lease while no other claim took the key over', async () => {
    const s = store(admin);
    const key = `late:wdl_${randomUUID()}`;
    await s.claim(key, 'slow', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await s.extend(key, 'slow', 60_000)).toBe(true);
    expect(await s.complete(key, 'slow', 60_000)).toBe(true);
    expect(await s.claim(key, 'other', 60_000)).toEqual({ state: 'completed' });
  });

  it('prune() deletes only the rows nothing needs any more', async () => {
    const pruneTable = `hookline_prune_${run}`;
    created.add(pruneTable);
    const s = mysqlStore({ client: admin, table: pruneTable, keepMs: 150 });
    await s.setup();
    await s.claim('live', 'a', 60_000); // live lease: kept
    await s.claim('done-short', 'b', 50); // pruned at the later of lease + keepMs and its retention
    await s.complete('done-short', 'b', 100); // retention ends: pruned
    await s.claim('done-long', 'c', 60_000);
    await s.complete('done-long', 'c', 60_000); // retained: kept
    await s.claim('released', 'd', 60_000);
    await s.release('released', 'd'); // released, keepMs 150: pruned
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await s.prune()).toBe(2);
    const [rows] = await admin.query(`SELECT CAST(k AS CHAR) AS k FROM \`${pruneTable}\` ORDER BY k`);
    expect((rows as { k: string }[]).map((r) => r.k)).toEqual(['done-long', 'live']);
    expect(await s.claim('done-long', 'e', 60_000)).toEqual({ state: 'completed' });
  });

  it('fails at once, never answering a state, when the database is not there', async () => {
    const pool = mysql.createPool({ host: '127.0.0.1', port: 1, user: 'root', connectTimeout: 1_000 });
    try {
      await expect(mysqlStore({ client: pool }).claim('k', 't', 60_000)).rejects.toThrow();
    } finally {
      await pool.end();
    }
  });
});
