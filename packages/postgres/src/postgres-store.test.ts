import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IdempotencyStore } from '@hookline/core';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import { describeStoreConformance } from '@hookline/testing/conformance';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresStore, postgresStore } from './postgres-store';
import { SCHEMA_SQL, schemaSql } from './schema';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
// Every run has its own schema, so runs sharing one database never see each other's rows.
const schema = `hookline_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

// Few connections: the shared server allows 100 and other test files run at the same time.
const newPool = () => new pg.Pool({ connectionString: DATABASE_URL, max: 8 });

/**
 * Sends every claim and completion together with one on a fresh decoy key, so both leave in one batch:
 * the conformance suite then runs against the batch statements instead of the one-row ones.
 */
function alwaysBatched(store: PostgresStore): IdempotencyStore {
  const decoy = () => `decoy:wdl_${randomUUID()}`;
  return {
    async claim(key, token, leaseMs) {
      const [result] = await Promise.all([store.claim(key, token, leaseMs), store.claim(decoy(), randomUUID(), leaseMs)]);
      return result;
    },
    async complete(key, token, retentionMs) {
      const [result] = await Promise.all([store.complete(key, token, retentionMs), store.complete(decoy(), token, retentionMs)]);
      return result;
    },
    release: (key, token) => store.release(key, token),
    extend: (key, token, leaseMs) => store.extend(key, token, leaseMs),
  };
}

/** A pool that counts the statements it was asked to run. */
function countingPool(pool: pg.Pool): { pool: pg.Pool; statements: () => number } {
  let statements = 0;
  const counted = new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return (...args: Parameters<pg.Pool['query']>) => {
        statements++;
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { pool: counted, statements: () => statements };
}

describe('schema', () => {
  it('ships schema.sql with the same text as SCHEMA_SQL', () => {
    expect(readFileSync(new URL('./schema.sql', import.meta.url), 'utf8')).toBe(SCHEMA_SQL);
  });

  it('refuses table and schema names that are not plain identifiers', () => {
    expect(() => schemaSql({ table: 'x"; DROP TABLE y; --' })).toThrow(/plain identifier/);
    expect(() => postgresStore({ client: newPool(), schema: 'a.b' })).toThrow(/schema/);
  });

  it('names the new option when given an old one', () => {
    expect(() => postgresStore({ pool: {} } as never)).toThrow(new TypeError('postgresStore: `pool` is now `client`'));
  });
});

describe.skipIf(!server.reachable)('postgresStore', () => {
  const admin = newPool();
  beforeAll(async () => {
    // Several processes starting together all call setup().
    const pools = Array.from({ length: 4 }, newPool);
    await Promise.all(pools.map((pool) => postgresStore({ client: pool, schema }).setup()));
    await Promise.all(pools.map((pool) => pool.end()));
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  /** Another session's transaction holding `key`'s row lock until `rollback()` (safe to call twice). */
  async function holdRowLock(key: string): Promise<{ rollback(): Promise<void> }> {
    const holder = await admin.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM "${schema}".hookline_idempotency WHERE key = $1 FOR UPDATE`, [key]);
    let held = true;
    return {
      async rollback() {
        if (!held) return;
        held = false;
        await holder.query('ROLLBACK').catch(() => {});
        holder.release();
      },
    };
  }

  describeStoreConformance(
    'postgresStore (pg Pool)',
    () => {
      const pool = newPool();
      let ended = false;
      return {
        store: postgresStore({ client: pool, schema }),
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
      versions: true,
      // A table nobody created (setup() never ran); the batched suite below uses a schema nobody created.
      notSetUp: () => {
        const pool = newPool();
        return { store: postgresStore({ client: pool, schema, table: 'never_set_up' }), cleanup: () => pool.end() };
      },
    },
  );

  describeStoreConformance(
    'postgresStore (batch statements)',
    () => {
      const pool = newPool();
      let ended = false;
      return {
        store: alwaysBatched(postgresStore({ client: pool, schema })),
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
      notSetUp: () => {
        const pool = newPool();
        return { store: alwaysBatched(postgresStore({ client: pool, schema: `${schema}_never` })), cleanup: () => pool.end() };
      },
    },
  );

  describeStoreConformance(
    'postgresStore (no prepared statements)',
    () => {
      const pool = newPool();
      let ended = false;
      return {
        store: postgresStore({ client: pool, schema, preparedStatements: false }),
        breakBackend: async () => {
          ended = true;
          await pool.end();
        },
        cleanup: async () => {
          if (!ended) await pool.end();
        },
      };
    },
    { rounds: 5, versions: true },
  );

  describe('batches', () => {
    it('sends claims and completions that arrive together in fewer statements, each answered as its own', async () => {
      const counting = countingPool(newPool());
      const store = postgresStore({ client: counting.pool, schema });
      try {
        const keys = Array.from({ length: 200 }, (_, i) => `batch:${i}:wdl_${randomUUID()}`);
        const tokens = keys.map(() => randomUUID());
        const claims = await Promise.all(keys.map((key, i) => store.claim(key, tokens[i]!, 60_000)));
        expect(claims.every((claim) => claim.state === 'acquired' && claim.attempt === 1)).toBe(true);
        const afterClaims = counting.statements();
        expect(afterClaims).toBeLessThan(keys.length / 4);
        // Half of them with the wrong token: only the owners' completions count.
        const completed = await Promise.all(keys.map((key, i) => store.complete(key, i % 2 === 0 ? tokens[i]! : randomUUID(), 60_000)));
        expect(completed).toEqual(keys.map((_, i) => i % 2 === 0));
        expect(counting.statements() - afterClaims).toBeLessThan(keys.length / 4);
        const again = await Promise.all(keys.map((key) => store.claim(key, randomUUID(), 60_000)));
        expect(again.map((claim) => claim.state)).toEqual(keys.map((_, i) => (i % 2 === 0 ? 'completed' : 'in_progress')));
      } finally {
        await counting.pool.end();
      }
    });

    it('answers two claims of one key sent together one after the other: one acquires', async () => {
      const pool = newPool();
      const store = postgresStore({ client: pool, schema });
      try {
        const key = `twice:wdl_${randomUUID()}`;
        const results = await Promise.all(Array.from({ length: 6 }, () => store.claim(key, randomUUID(), 60_000)));
        expect(results.filter((r) => r.state === 'acquired')).toHaveLength(1);
        expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(5);
      } finally {
        await pool.end();
      }
    });

    it('answers many claims of several keys sent together as single claims would be: one acquires each key, in few statements', async () => {
      const counting = countingPool(newPool());
      const store = postgresStore({ client: counting.pool, schema });
      try {
        const keys = Array.from({ length: 8 }, (_, i) => `crowd:${i}:wdl_${randomUUID()}`);
        // Each key claimed five times, interleaved, by as many tokens, all in one turn of the event loop.
        const claims = Array.from({ length: 5 }, () => keys.map((key) => ({ key, token: randomUUID() }))).flat();
        const results = await Promise.all(claims.map(({ key, token }) => store.claim(key, token, 60_000)));
        for (const key of keys) {
          const answers = results.filter((_, i) => claims[i]?.key === key);
          expect(answers.filter((r) => r.state === 'acquired')).toEqual([{ state: 'acquired', attempt: 1 }]);
          expect(answers.filter((r) => r.state === 'in_progress')).toHaveLength(4);
        }
        // The distinct keys share statements: a key's repeats wait for later batches, so five rounds at most.
        expect(counting.statements()).toBeLessThanOrEqual(5);
        // The winners, and only they, complete.
        const winners = claims.filter((_, i) => results[i]?.state === 'acquired');
        const losers = claims.filter((_, i) => results[i]?.state !== 'acquired');
        expect(await Promise.all(losers.map(({ key, token }) => store.complete(key, token, 60_000)))).toEqual(losers.map(() => false));
        expect(await Promise.all(winners.map(({ key, token }) => store.complete(key, token, 60_000)))).toEqual(winners.map(() => true));
      } finally {
        await counting.pool.end();
      }
    });

    it('fails only the callers of the statement that failed: a batch stopped by a row lock, not the batch sent beside it', async () => {
      const pool = newPool();
      const store = postgresStore({ client: pool, schema, lockTimeoutMs: 300 });
      let holder: { rollback(): Promise<void> } | undefined;
      try {
        const locked = `held:wdl_${randomUUID()}`;
        expect(await store.claim(locked, randomUUID(), 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        holder = await holdRowLock(locked);
        // One batch holds the locked key and two free ones; the next turn's claims leave as a second
        // statement (batchConcurrency 2) while the first waits on the lock.
        const beside = [`beside-a:wdl_${randomUUID()}`, `beside-b:wdl_${randomUUID()}`];
        const stopped = [locked, ...beside].map((key) => refusal(store.claim(key, randomUUID(), 60_000)));
        await new Promise((resolve) => setImmediate(resolve));
        const free = [`later-a:wdl_${randomUUID()}`, `later-b:wdl_${randomUUID()}`];
        const later = await Promise.all(free.map((key) => store.claim(key, randomUUID(), 60_000)));
        expect(later).toEqual(free.map(() => ({ state: 'acquired', attempt: 1 })));
        // The whole first statement gave up on the lock (lockTimeoutMs bounds a batch as a single claim):
        // its callers get 55P03, answered 503, and nothing of it was written.
        const errors = await Promise.all(stopped);
        expect(errors.map((error) => (error as { code?: string }).code)).toEqual(['55P03', '55P03', '55P03']);
        await holder.rollback();
        const written = await admin.query(`SELECT key FROM "${schema}".hookline_idempotency WHERE key = ANY($1)`, [beside]);
        expect(written.rowCount).toBe(0);
        // Sent again, as the service would, the free keys are acquired and the held one is still leased.
        expect(await Promise.all(beside.map((key) => store.claim(key, randomUUID(), 60_000)))).toEqual(
          beside.map(() => ({ state: 'acquired', attempt: 1 })),
        );
        expect((await store.claim(locked, randomUUID(), 60_000)).state).toBe('in_progress');
      } finally {
        await holder?.rollback();
        await pool.end();
      }
    });

    it('fails only the operation whose key the database refuses, not the others in its batch', async () => {
      const pool = newPool();
      const store = postgresStore({ client: pool, schema });
      try {
        const good = Array.from({ length: 5 }, () => `good:wdl_${randomUUID()}`);
        // PostgreSQL text cannot hold U+0000: a data exception for that row alone.
        const [bad, ...rest] = await Promise.allSettled([
          store.claim('bad\u0000key', randomUUID(), 60_000),
          ...good.map((key) => store.claim(key, randomUUID(), 60_000)),
        ]);
        expect(bad?.status).toBe('rejected');
        expect(StoreDataError.is(bad?.status === 'rejected' && bad.reason)).toBe(true);
        expect(rest.map((r) => (r.status === 'fulfilled' ? r.value.state : r.reason))).toEqual(good.map(() => 'acquired'));
      } finally {
        await pool.end();
      }
    });

    it('never deadlocks: two processes claim and complete the same keys in opposite orders at once', async () => {
      const pools = [newPool(), newPool()];
      const [a, b] = pools.map((pool) => postgresStore({ client: pool, schema })) as [PostgresStore, PostgresStore];
      try {
        for (let round = 0; round < 10; round++) {
          const keys = Array.from({ length: 30 }, (_, i) => `order:${round}:${i}:wdl_${randomUUID()}`);
          const tokens = keys.map(() => randomUUID());
          await Promise.all(keys.map((key, i) => a.claim(key, tokens[i]!, 60_000)));
          // a completes in one order while b claims (as a retry would) in the other.
          const [completed, claims] = await Promise.all([
            Promise.all(keys.map((key, i) => a.complete(key, tokens[i]!, 60_000))),
            Promise.all([...keys].reverse().map((key) => b.claim(key, randomUUID(), 60_000))),
          ]);
          expect(completed.every(Boolean)).toBe(true);
          expect(claims.every((claim) => claim.state === 'completed' || claim.state === 'in_progress')).toBe(true);
        }
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
      }
    });

    it('refuses batch sizes and concurrency that are not positive integers', () => {
      expect(() => postgresStore({ client: admin, maxBatchSize: 0 })).toThrow(/maxBatchSize/);
      expect(() => postgresStore({ client: admin, batchConcurrency: 1.5 })).toThrow(/batchConcurrency/);
    });
  });

  /** What an operation settled with: its error, or its answer as JSON. */
  const refusal = (operation: unknown) =>
    Promise.resolve(operation).then(
      (value) => JSON.stringify(value),
      (error: unknown) => error,
    );

  describe('keys the database refuses', () => {
    it('refuses U+0000, a lone surrogate and an over-long key with a StoreDataError, alone and in batches', async () => {
      const pool = newPool();
      const store = postgresStore({ client: pool, schema });
      try {
        const id = `refused:wdl_${randomUUID()}`;
        // 22021 (text cannot hold U+0000), a lone surrogate (checked before pg encodes it lossily),
        // 54000 (too large for the primary key's index: a B-tree entry holds about 2.7 kB).
        // (Random text: a repeated one would be compressed into the index.)
        const long = Array.from({ length: 250 }, () => randomUUID()).join('');
        const odd = [`${id}\u0000`, `${id}\ud800`, `${id}\udfff`, `${id}:${long}`];
        for (const key of odd) {
          const error = await refusal(store.claim(key, randomUUID(), 60_000));
          expect(StoreDataError.is(error), String(error)).toBe(true);
          for (const operation of [
            refusal(store.complete(key, 't', 60_000)),
            refusal(store.release(key, 't')),
            refusal(store.extend(key, 't', 60_000)),
          ]) {
            const other = await operation;
            // complete/release/extend of a key with no row may also answer false; never a 503-style error.
            if (other !== 'false') expect(StoreDataError.is(other), String(other)).toBe(true);
          }
        }
        // Sent together, each refused key fails alone, as a StoreDataError; the good one is acquired.
        const together = await Promise.allSettled([...odd, `${id}\ufffd`].map((key) => store.claim(key, randomUUID(), 60_000)));
        expect(together.slice(0, -1).every((r) => r.status === 'rejected' && StoreDataError.is(r.reason))).toBe(true);
        expect(together.at(-1)).toEqual({ status: 'fulfilled', value: { state: 'acquired', attempt: 1 } });
      } finally {
        await pool.end();
      }
    });
  });

  describe('lock waits', () => {
    it('fails a claim blocked by another transaction holding the row lock after lockTimeoutMs, not as a data error; a completion waits', async () => {
      const pool = newPool();
      const store = postgresStore({ client: pool, schema, lockTimeoutMs: 300 });
      let holder: { rollback(): Promise<void> } | undefined;
      try {
        const key = `locked:wdl_${randomUUID()}`;
        const token = randomUUID();
        expect(await store.claim(key, token, 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        holder = await holdRowLock(key);
        const claim = await refusal(store.claim(key, randomUUID(), 60_000));
        expect((claim as { code?: string }).code).toBe('55P03'); // lock_not_available: answered 503 by the receiver
        expect(StoreDataError.is(claim)).toBe(false);
        // The batch statement bounds its waits too (two claims sent together leave as one statement).
        const batched = await Promise.all([
          refusal(store.claim(key, randomUUID(), 60_000)),
          refusal(store.claim(`decoy:wdl_${randomUUID()}`, randomUUID(), 60_000)),
        ]);
        expect((batched[0] as { code?: string }).code).toBe('55P03');
        // A completion records work already done: it waits for the lock instead of giving up.
        let completed: boolean | undefined;
        const completion = Promise.resolve(store.complete(key, token, 60_000)).then((done) => {
          completed = done;
        });
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect(completed).toBeUndefined();
        await holder.rollback();
        await completion;
        expect(completed).toBe(true);
        expect(await store.claim(key, randomUUID(), 60_000)).toEqual({ state: 'completed' });
        // The bound was the statements' own: the pool's sessions kept the server's setting.
        expect((await pool.query('SHOW lock_timeout')).rows[0]).toEqual({ lock_timeout: '0' });
      } finally {
        await holder?.rollback();
        await pool.end();
      }
    });

    it('refuses a lockTimeoutMs that is not a whole number of milliseconds', () => {
      expect(() => postgresStore({ client: admin, lockTimeoutMs: 1.5 })).toThrow(/lockTimeoutMs/);
      expect(() => postgresStore({ client: admin, lockTimeoutMs: -1 })).toThrow(/lockTimeoutMs/);
    });
  });

  it('creates the table, the index on purge_at and the schema only when absent', async () => {
    const store = postgresStore({ client: admin, schema });
    await store.setup(); // a second time: nothing happens, nothing fails
    const indexes = await admin.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1`, [schema]);
    expect(indexes.rows.map((r: { indexdef: string }) => r.indexdef).join('\n')).toMatch(/USING btree \(purge_at\)/);
    expect(store.table).toBe(`"${schema}"."hookline_idempotency"`);
  });

  it('keeps expiry on the database clock (statement_timestamp), as rows show', async () => {
    const store = postgresStore({ client: admin, schema });
    const key = `clock:wdl_${randomUUID()}`;
    const token = randomUUID();
    await store.claim(key, token, 45_000);
    const { rows } = await admin.query(
      `SELECT state, attempt, extract(epoch FROM expires_at - now()) * 1000 AS left_ms FROM "${schema}".hookline_idempotency WHERE key = $1`,
      [key],
    );
    expect(rows[0].state).toBe('l');
    expect(Number(rows[0].left_ms)).toBeGreaterThan(40_000);
    expect(Number(rows[0].left_ms)).toBeLessThanOrEqual(45_000);
  });

  it('prune() deletes only the rows nothing needs any more', async () => {
    const store = postgresStore({ client: admin, schema, table: 'prune_test', keepMs: 150 });
    await store.setup();
    const t = () => randomUUID();
    const live = t();
    await store.claim('live', live, 60_000); // live lease: kept
    const done = t();
    await store.claim('done-short', done, 60_000);
    await store.complete('done-short', done, 100); // retention ends: pruned
    const kept = t();
    await store.claim('done-long', kept, 60_000);
    await store.complete('done-long', kept, 60_000); // retained: kept
    const released = t();
    await store.claim('released', released, 60_000);
    await store.release('released', released); // released, keepMs 150: pruned
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await store.prune()).toBe(2);
    const { rows } = await admin.query(`SELECT key FROM "${schema}".prune_test ORDER BY key`);
    expect(rows.map((r: { key: string }) => r.key)).toEqual(['done-long', 'live']);
    expect(await store.claim('done-long', t(), 60_000)).toEqual({ state: 'completed' });
  });

  it('always answers exactly one state per claim, with takeovers, releases and prune racing', async () => {
    const pools = [newPool(), newPool()];
    const stores = pools.map((pool) => postgresStore({ client: pool, schema, keepMs: 50 }));
    try {
      const keys = Array.from({ length: 8 }, () => `storm:wdl_${randomUUID()}`);
      for (let round = 0; round < 4; round++) {
        const results = await Promise.all([
          ...Array.from({ length: 48 }, (_, i) => stores[i % 2]!.claim(keys[i % keys.length]!, randomUUID(), 400)),
          stores[0]!.prune(),
        ]);
        const claims = results.slice(0, 48) as Awaited<ReturnType<(typeof stores)[0]['claim']>>[];
        // Each key was free at the start of the round (the last lease ended): one winner per key.
        for (const [k] of keys.entries()) {
          const mine = claims.filter((_, i) => i % keys.length === k);
          expect(mine.filter((c) => c.state === 'acquired')).toHaveLength(1);
          expect(mine.every((c) => c.state === 'acquired' || c.state === 'in_progress')).toBe(true);
        }
        await new Promise((resolve) => setTimeout(resolve, 450));
      }
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});
