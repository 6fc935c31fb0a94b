// The Postgres store's transaction() with a version advance (a transactional handler with an ordering
// guard): the handler's writes, its completion and its version record commit together or not at all,
// on the shared server, in a schema of this run's own, dropped afterwards.
import { randomUUID } from 'node:crypto';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_txv_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const LONG_MS = 60_000;

/** What `promise` rejects with, or undefined when it resolves. */
const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe.skipIf(!server.reachable)('postgresStore: transaction() with a version advance', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  const store = postgresStore({ pool, schema });
  const rows = `"${schema}".rows`;
  const rowsOf = async (id: string) =>
    ((await pool.query(`SELECT count(*)::int AS n FROM ${rows} WHERE id = $1`, [id])).rows[0] as { n: number }).n;
  const insert = (tx: unknown, id: string) => (tx as pg.PoolClient).query(`INSERT INTO ${rows} (id) VALUES ($1)`, [id]);

  /** A leased delivery key and a fresh version key: the completion a transaction commits. */
  async function leased(label: string, leaseMs = LONG_MS, version = 5) {
    const key = `txv:${label}:wdl_${randomUUID().replaceAll('-', '')}`;
    const token = randomUUID();
    expect(await store.claim(key, token, leaseMs)).toEqual({ state: 'acquired', attempt: 1 });
    const versionKey = `txv:order:h:lin_${randomUUID()}:version`;
    return { key, token, retentionMs: LONG_MS, version: { key: versionKey, version, retentionMs: LONG_MS } };
  }

  beforeAll(async () => {
    await store.ensureSchema();
    await pool.query(`CREATE TABLE ${rows} (id text PRIMARY KEY)`);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('commits the work, the completion and the version together', async () => {
    const completion = await leased('commit');
    await store.advanceVersion(completion.version.key, 4, LONG_MS);
    const answer = await store.transaction!(async (tx) => {
      await insert(tx, completion.key);
      return 'done';
    }, completion);
    expect(answer).toEqual({ value: 'done', completed: true });
    expect(await rowsOf(completion.key)).toBe(1);
    expect(await store.readVersion(completion.version.key)).toBe(5);
    expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
    // Recorded as advanceVersion records it: compare-and-set from here on.
    expect(await store.advanceVersion(completion.version.key, 5, LONG_MS)).toBe(false);
    expect(await store.advanceVersion(completion.version.key, 6, LONG_MS)).toBe(true);
    expect(pool.totalCount - pool.idleCount).toBe(0); // the connection went back
  });

  it('rolls the version back with the work and the completion when the work throws', async () => {
    const completion = await leased('throw');
    await store.advanceVersion(completion.version.key, 4, LONG_MS);
    const failure = new Error('handler failed after its insert');
    await expect(
      store.transaction!(async (tx) => {
        await insert(tx, completion.key);
        throw failure;
      }, completion),
    ).rejects.toBe(failure);
    expect(await rowsOf(completion.key)).toBe(0);
    expect(await store.readVersion(completion.version.key)).toBe(4);
    expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true); // still leased: not completed
  });

  it('rolls the version back when the lease was taken over meanwhile (completed: false)', async () => {
    const completion = await leased('lost', 100);
    const answer = await store.transaction!(async (tx) => {
      await insert(tx, completion.key);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'acquired', attempt: 2 });
      return 1;
    }, completion);
    expect(answer).toEqual({ value: 1, completed: false });
    expect(await rowsOf(completion.key)).toBe(0);
    expect(await store.readVersion(completion.version.key)).toBeUndefined();
  });

  it('leaves a record at or above the version as it is, and still commits the work and the completion', async () => {
    for (const recorded of [9, 5]) {
      const completion = await leased(`not-higher-${recorded}`);
      expect(await store.advanceVersion(completion.version.key, recorded, LONG_MS)).toBe(true);
      const answer = await store.transaction!(async (tx) => {
        await insert(tx, completion.key);
        return 'done';
      }, completion);
      expect(answer, `recorded ${recorded}`).toEqual({ value: 'done', completed: true });
      expect(await rowsOf(completion.key)).toBe(1);
      expect(await store.readVersion(completion.version.key)).toBe(recorded);
      expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
    }
  });

  it('refuses a version that is not a finite number with StoreDataError before borrowing a connection', async () => {
    let borrowed = 0;
    const counting = new Proxy(pool, {
      get(target, property) {
        if (property !== 'connect') return Reflect.get(target, property, target);
        return () => {
          borrowed++;
          return target.connect();
        };
      },
    });
    const refusing = postgresStore({ pool: counting, schema });
    for (const version of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '5', undefined]) {
      const completion = await leased('refused');
      let ran = false;
      const failure = await rejectionOf(
        refusing.transaction!(
          async () => {
            ran = true;
          },
          { ...completion, version: { ...completion.version, version: version as number } },
        ),
      );
      expect(StoreDataError.is(failure), `${String(version)}: ${String(failure)}`).toBe(true);
      expect(ran).toBe(false);
      expect(await store.readVersion(completion.version.key)).toBeUndefined();
      expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true);
    }
    expect(borrowed).toBe(0);
  });

  for (const [moment, isStatement] of [
    ['its version statement', (text: string) => text.includes('_versions')],
    ['COMMIT', (text: string) => text === 'COMMIT'],
  ] as const) {
    it(`keeps neither the completion nor the version when the server ends the connection before ${moment}`, async () => {
      const lending = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      try {
        const completion = await leased(`killed-${moment.length}`);
        await store.advanceVersion(completion.version.key, 4, LONG_MS);
        const killing = killingBefore(lending, pool, isStatement);
        const failure = await rejectionOf(
          postgresStore({ pool: killing.pool, schema }).transaction!(async (tx) => {
            await insert(tx, completion.key);
            return 'inserted';
          }, completion),
        );
        expect(killing.killed(), 'the connection was ended at that moment').toBe(true);
        expect(failure).toBeInstanceOf(Error);
        expect(await rowsOf(completion.key)).toBe(0);
        expect(await store.readVersion(completion.version.key)).toBe(4);
        // Not completed: the lease is still its token's, for the next attempt.
        expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true);
        expect(lending.totalCount).toBe(0); // the dead connection was discarded
      } finally {
        await lending.end();
      }
    });
  }
});

/**
 * `lending` with one change: the connection it lends has its server process terminated (by `admin`,
 * pg_terminate_backend, waiting until it is gone) just before it would send the first statement
 * `isStatement` matches, which then goes out on a dead connection.
 */
function killingBefore(lending: pg.Pool, admin: pg.Pool, isStatement: (text: string) => boolean) {
  let killed = false;
  const kill = async (pid: number): Promise<void> => {
    killed = true;
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    for (let tries = 0; tries < 200; tries++) {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
      if (rowCount === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the server process ${pid} was still there 10 s after pg_terminate_backend`);
  };
  const pool = new Proxy(lending, {
    get(target, property) {
      if (property !== 'connect') return Reflect.get(target, property, target);
      return async () => {
        const client = await target.connect();
        const pid = ((await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;
        return new Proxy(client, {
          get(inner, name) {
            const value = Reflect.get(inner, name, inner);
            if (name !== 'query') return typeof value === 'function' ? value.bind(inner) : value;
            return async (config: { text: string }, ...rest: unknown[]) => {
              if (!killed && typeof config === 'object' && isStatement(config.text)) await kill(pid);
              return (inner.query as (...args: unknown[]) => unknown)(config, ...rest);
            };
          },
        });
      };
    },
  });
  return { pool, killed: () => killed };
}
