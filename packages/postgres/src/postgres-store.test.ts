import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describeStoreConformance, requireServer } from '@hookline/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';
import { SCHEMA_SQL, schemaSql } from './schema';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
// Every run has its own schema, so runs sharing one database never see each other's rows.
const schema = `hookline_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

// Few connections: the shared server allows 100 and other test files run at the same time.
const newPool = () => new pg.Pool({ connectionString: DATABASE_URL, max: 8 });

describe('schema', () => {
  it('ships schema.sql with the same text as SCHEMA_SQL', () => {
    expect(readFileSync(new URL('./schema.sql', import.meta.url), 'utf8')).toBe(SCHEMA_SQL);
  });

  it('refuses table and schema names that are not plain identifiers', () => {
    expect(() => schemaSql({ table: 'x"; DROP TABLE y; --' })).toThrow(/plain identifier/);
    expect(() => postgresStore({ pool: newPool(), schema: 'a.b' })).toThrow(/schema/);
  });
});

describe.skipIf(!server.reachable)('postgresStore', () => {
  const admin = newPool();
  beforeAll(async () => {
    // Several processes starting together all call ensureSchema().
    const pools = Array.from({ length: 4 }, newPool);
    await Promise.all(pools.map((pool) => postgresStore({ pool, schema }).ensureSchema()));
    await Promise.all(pools.map((pool) => pool.end()));
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  describeStoreConformance('postgresStore (pg Pool)', () => {
    const pool = newPool();
    let ended = false;
    return {
      store: postgresStore({ pool, schema }),
      breakBackend: async () => {
        ended = true;
        await pool.end();
      },
      cleanup: async () => {
        if (!ended) await pool.end();
      },
    };
  });

  describeStoreConformance(
    'postgresStore (no prepared statements)',
    () => {
      const pool = newPool();
      let ended = false;
      return {
        store: postgresStore({ pool, schema, preparedStatements: false }),
        breakBackend: async () => {
          ended = true;
          await pool.end();
        },
        cleanup: async () => {
          if (!ended) await pool.end();
        },
      };
    },
    { rounds: 5 },
  );

  it('creates the table, the index on purge_at and the schema only when absent', async () => {
    const store = postgresStore({ pool: admin, schema });
    await store.ensureSchema(); // a second time: nothing happens, nothing fails
    const indexes = await admin.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1`, [schema]);
    expect(indexes.rows.map((r: { indexdef: string }) => r.indexdef).join('\n')).toMatch(/USING btree \(purge_at\)/);
    expect(store.table).toBe(`"${schema}"."hookline_idempotency"`);
  });

  it('keeps expiry on the database clock (statement_timestamp), as rows show', async () => {
    const store = postgresStore({ pool: admin, schema });
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
    const store = postgresStore({ pool: admin, schema, table: 'prune_test', keepMs: 150 });
    await store.ensureSchema();
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
    const stores = pools.map((pool) => postgresStore({ pool, schema, keepMs: 50 }));
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
