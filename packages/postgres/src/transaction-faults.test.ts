// The Postgres store's transaction() when the database refuses part of it: a COMMIT that fails, a
// completion whose key the database cannot hold. Nothing is kept half-done, the lease stays with its
// token for the next attempt, and a connection whose state is unknown goes back to nobody.
import { randomUUID } from 'node:crypto';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_txf_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const LONG_MS = 60_000;

describe.skipIf(!server.reachable)('postgresStore: transaction() when the database refuses', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  // Built for each test (beforeEach), not while the file is collected or in beforeAll: what the store
  // sets up when it is built (its statements, the completion its transactions run) then counts for
  // the test that uses it, under mutation testing too.
  let store: ReturnType<typeof postgresStore>;
  beforeEach(() => {
    store = postgresStore({ pool, schema });
  });
  // A unique constraint checked only at COMMIT: a duplicate inserted by the work fails the COMMIT itself.
  const deferred = `"${schema}".deferred`;
  const rowsOf = async (id: string) =>
    ((await pool.query(`SELECT count(*)::int AS n FROM ${deferred} WHERE id = $1`, [id])).rows[0] as { n: number }).n;

  beforeAll(async () => {
    await postgresStore({ pool, schema }).ensureSchema();
    await pool.query(`CREATE TABLE ${deferred} (id text, CONSTRAINT deferred_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('rejects with the server error when COMMIT fails: neither the work nor the completion is kept, the lease stays', async () => {
    const key = `tx-commit:wdl_${randomUUID()}`;
    const token = randomUUID();
    await store.claim(key, token, LONG_MS);
    const connectionsBefore = pool.totalCount;
    const failure = await store.transaction!(
      async (tx) => {
        await (tx as pg.PoolClient).query(`INSERT INTO ${deferred} (id) VALUES ($1), ($1)`, [key]);
        return 'inserted twice';
      },
      { key, token, retentionMs: LONG_MS },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((failure as { code?: string }).code).toBe('23505'); // unique_violation, raised by COMMIT
    // Whether a failed COMMIT committed cannot be known from the client: that connection is closed, not reused.
    expect(pool.totalCount).toBe(connectionsBefore - 1);
    expect(await rowsOf(key)).toBe(0);
    // Not completed: the token still holds the lease.
    expect(await store.extend(key, token, LONG_MS)).toBe(true);
  });

  it('rolls the work back and rejects with a StoreDataError when the database cannot hold the completion key', async () => {
    // U+0000 passes the store's own checks, and PostgreSQL text refuses it (SQLSTATE 22021).
    const key = `tx-key:wdl_${randomUUID()}\u0000`;
    const marker = `tx-key:${randomUUID()}`;
    const failure = await store.transaction!(
      async (tx) => {
        await (tx as pg.PoolClient).query(`INSERT INTO ${deferred} (id) VALUES ($1)`, [marker]);
        return 'inserted';
      },
      { key, token: randomUUID(), retentionMs: LONG_MS },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(StoreDataError.is(failure), String(failure)).toBe(true);
    expect(await rowsOf(marker)).toBe(0);
    expect(pool.totalCount - pool.idleCount).toBe(0); // the connection went back
  });

  it('refuses a retention that is not a positive number of milliseconds before borrowing a connection', async () => {
    for (const retentionMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '60000' as unknown as number]) {
      let ran = false;
      await expect(
        store.transaction!(
          async () => {
            ran = true;
          },
          { key: `tx-retention:wdl_${randomUUID()}`, token: 't', retentionMs },
        ),
      ).rejects.toThrow(/^postgresStore: retentionMs must be a positive number of milliseconds/);
      expect(ran).toBe(false);
    }
  });

  it('is offered with a pg Pool, and not with a Client or anything else that does not count its connections', async () => {
    expect(typeof postgresStore({ pool, schema }).transaction).toBe('function');
    const client = new pg.Client({ connectionString: DATABASE_URL });
    expect(postgresStore({ pool: client, schema }).transaction).toBeUndefined();
    const query = pool.query.bind(pool) as typeof pool.query;
    const connect = pool.connect.bind(pool);
    const lookalikes = [
      { query, totalCount: 1, idleCount: 1 },
      { query, connect, idleCount: 1 },
      { query, connect, totalCount: 1 },
      { query, connect: 'connect', totalCount: 1, idleCount: 1 },
    ];
    for (const lookalike of lookalikes) expect(postgresStore({ pool: lookalike as never, schema }).transaction).toBeUndefined();
    expect(typeof postgresStore({ pool: { query, connect, totalCount: 0, idleCount: 0 } as never, schema }).transaction).toBe('function');
  });
});
