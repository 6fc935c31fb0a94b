// The Postgres store's version records (ordering guards) at their edges: values refused before they
// reach the database, keys the database refuses, and prune() errors other than a missing table.
import { randomUUID } from 'node:crypto';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_ver_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

describe.skipIf(!server.reachable)('postgresStore version records', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('refuses a version that is not a finite number and a retention that is not positive, writing nothing', async () => {
    const store = postgresStore({ client: pool, schema });
    await store.setup();
    const key = `version:wdl_${randomUUID()}`;
    for (const [version, shown] of [
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      ['5', '"5"'],
    ] as const) {
      const refusal = await store.advanceVersion(key, version as number, 60_000).then(
        () => undefined,
        (error: unknown) => error,
      );
      // A data error (500), not an outage (503): the same refusal every store gives.
      expect(StoreDataError.is(refusal), String(refusal)).toBe(true);
      expect((refusal as Error).message).toBe(`postgresStore: a version must be a finite number, got ${shown}`);
    }
    for (const retentionMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, '60000' as unknown as number]) {
      await expect(store.advanceVersion(key, 1, retentionMs)).rejects.toThrow(
        new RangeError(`postgresStore: retentionMs must be a positive number of milliseconds, got ${retentionMs}`),
      );
    }
    expect(await store.readVersion(key)).toBeUndefined();
    expect(await store.advanceVersion(key, 0.5, 0.5)).toBe(true);
  });

  it('refuses a key the database cannot hold with a StoreDataError, on read and advance', async () => {
    const store = postgresStore({ client: pool, schema });
    const key = `version:wdl_${randomUUID()}\u0000`;
    const read = await store.readVersion(key).then(
      () => undefined,
      (error: unknown) => error,
    );
    const advance = await store.advanceVersion(key, 1, 60_000).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(StoreDataError.is(read), String(read)).toBe(true);
    expect(StoreDataError.is(advance), String(advance)).toBe(true);
    // The message names the SQLSTATE, and the database's own error is kept as the cause.
    expect((read as Error).message).toMatch(/^postgresStore: the database refused the key \(SQLSTATE 22021\): /);
    expect(((read as Error).cause as { code?: string }).code).toBe('22021');
  });

  it('refuses a key holding a lone surrogate before it reaches the database, naming the key', async () => {
    const store = postgresStore({ client: pool, schema });
    const key = 'version:\ud800';
    await expect(store.readVersion(key)).rejects.toThrow(
      `postgresStore: the key ${JSON.stringify(key)} is not well-formed Unicode (a lone surrogate); it would be stored lossily`,
    );
  });

  it('rejects prune() when the version table fails for another reason than being absent', async () => {
    const odd = `${schema}_odd`;
    await pool.query(`CREATE SCHEMA "${odd}"`);
    try {
      const store = postgresStore({ client: pool, schema: odd });
      await pool.query(`CREATE TABLE "${odd}".hookline_idempotency (key text PRIMARY KEY, state "char" NOT NULL, token text,
        attempt integer NOT NULL, expires_at timestamptz NOT NULL, purge_at timestamptz NOT NULL)`);
      // A version table without expires_at: the prune statement fails with undefined_column (42703).
      await pool.query(`CREATE TABLE "${odd}".hookline_idempotency_versions (key text PRIMARY KEY, version float8 NOT NULL)`);
      const failure = await store.prune().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((failure as { code?: string }).code).toBe('42703');
    } finally {
      await pool.query(`DROP SCHEMA "${odd}" CASCADE`);
    }
  });
});
