// The MySQL store's transaction() with a version advance (a transactional handler with an ordering
// guard): the handler's writes, its completion and its version record commit together or not at all,
// on the shared server, in tables of this run's own, dropped afterwards.
import { randomUUID } from 'node:crypto';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlStore } from './mysql-store';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const server = await requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 });
const table = `hookline_txv_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const rowsTable = `\`${table}_rows\``;
const LONG_MS = 60_000;

/** What `promise` rejects with, or undefined when it resolves. */
const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe.skipIf(!server.reachable)('mysqlStore: transaction() with a version advance', () => {
  const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 4 });
  const store = mysqlStore({ pool, table });
  const rowsOf = async (id: string) =>
    ((await pool.query(`SELECT count(*) AS n FROM ${rowsTable} WHERE id = ?`, [id]))[0] as { n: number }[])[0]!.n;
  const insert = (connection: unknown, id: string) =>
    (connection as mysql.PoolConnection).query(`INSERT INTO ${rowsTable} (id) VALUES (?)`, [id]);

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
    await pool.query(`CREATE TABLE ${rowsTable} (id VARCHAR(200) PRIMARY KEY) ENGINE = InnoDB`);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_versions\`, ${rowsTable}`);
    await pool.end();
  });

  it('commits the work, the completion and the version together', async () => {
    const completion = await leased('commit');
    await store.advanceVersion!(completion.version.key, 4, LONG_MS);
    const answer = await store.transaction!(async (connection) => {
      await insert(connection, completion.key);
      return 'done';
    }, completion);
    expect(answer).toEqual({ value: 'done', completed: true });
    expect(await rowsOf(completion.key)).toBe(1);
    expect(await store.readVersion!(completion.version.key)).toBe(5);
    expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
    // Recorded as advanceVersion records it: compare-and-set from here on.
    expect(await store.advanceVersion!(completion.version.key, 5, LONG_MS)).toBe(false);
    expect(await store.advanceVersion!(completion.version.key, 6, LONG_MS)).toBe(true);
  });

  it('rolls the version back with the work and the completion when the work throws', async () => {
    const completion = await leased('throw');
    await store.advanceVersion!(completion.version.key, 4, LONG_MS);
    const failure = new Error('handler failed after its insert');
    await expect(
      store.transaction!(async (connection) => {
        await insert(connection, completion.key);
        throw failure;
      }, completion),
    ).rejects.toBe(failure);
    expect(await rowsOf(completion.key)).toBe(0);
    expect(await store.readVersion!(completion.version.key)).toBe(4);
    expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true); // still leased: not completed
  });

  it('rolls the version back when the lease was taken over meanwhile (completed: false)', async () => {
    const completion = await leased('lost', 100);
    const answer = await store.transaction!(async (connection) => {
      await insert(connection, completion.key);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'acquired', attempt: 2 });
      return 1;
    }, completion);
    expect(answer).toEqual({ value: 1, completed: false });
    expect(await rowsOf(completion.key)).toBe(0);
    expect(await store.readVersion!(completion.version.key)).toBeUndefined();
  });

  it('leaves a record at or above the version as it is, and still commits the work and the completion', async () => {
    for (const recorded of [9, 5]) {
      const completion = await leased(`not-higher-${recorded}`);
      expect(await store.advanceVersion!(completion.version.key, recorded, LONG_MS)).toBe(true);
      const answer = await store.transaction!(async (connection) => {
        await insert(connection, completion.key);
        return 'done';
      }, completion);
      expect(answer, `recorded ${recorded}`).toEqual({ value: 'done', completed: true });
      expect(await rowsOf(completion.key)).toBe(1);
      expect(await store.readVersion!(completion.version.key)).toBe(recorded);
      expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
    }
  });

  it('refuses a version that is not a finite number with StoreDataError before borrowing a connection', async () => {
    let borrowed = 0;
    const counting = new Proxy(pool, {
      get(target, property) {
        if (property !== 'getConnection') return Reflect.get(target, property, target);
        return () => {
          borrowed++;
          return target.getConnection();
        };
      },
    });
    const refusing = mysqlStore({ pool: counting, table });
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
      expect(await store.readVersion!(completion.version.key)).toBeUndefined();
      expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true);
    }
    expect(borrowed).toBe(0);
  });

  for (const [moment, isStatement] of [
    ['its version statement', (sql: string) => sql.includes('_versions')],
    ['COMMIT', (sql: string) => sql === 'COMMIT'],
  ] as const) {
    it(`keeps neither the completion nor the version when the server ends the connection before ${moment}`, async () => {
      const lending = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
      try {
        const completion = await leased(`killed-${moment.length}`);
        await store.advanceVersion!(completion.version.key, 4, LONG_MS);
        const killing = killingBefore(lending, pool, isStatement);
        const failure = await rejectionOf(
          mysqlStore({ pool: killing.pool, table }).transaction!(async (connection) => {
            await insert(connection, completion.key);
            return 'inserted';
          }, completion),
        );
        expect(killing.killed(), 'the connection was ended at that moment').toBe(true);
        expect(failure).toBeInstanceOf(Error);
        expect(await rowsOf(completion.key)).toBe(0);
        expect(await store.readVersion!(completion.version.key)).toBe(4);
        // Not completed: the lease is still its token's, for the next attempt.
        expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true);
      } finally {
        await lending.end();
      }
    });
  }
});

/**
 * `lending` with one change: the connection it lends is killed on the server (by `admin`, KILL
 * CONNECTION, waiting until its thread is gone) just before it would send the first statement
 * `isStatement` matches, which then goes out on a dead connection.
 */
function killingBefore(lending: mysql.Pool, admin: mysql.Pool, isStatement: (sql: string) => boolean) {
  let killed = false;
  const kill = async (id: number): Promise<void> => {
    killed = true;
    await admin.query(`KILL CONNECTION ${Number(id)}`);
    for (let tries = 0; tries < 200; tries++) {
      const [found] = await admin.query('SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
      if ((found as unknown[]).length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the connection ${id} was still there 10 s after KILL CONNECTION`);
  };
  const pool = new Proxy(lending, {
    get(target, property) {
      if (property !== 'getConnection') return Reflect.get(target, property, target);
      return async () => {
        const connection = await target.getConnection();
        return new Proxy(connection, {
          get(inner, name) {
            const value = Reflect.get(inner, name, inner);
            if (name !== 'query') return typeof value === 'function' ? value.bind(inner) : value;
            return async (options: { sql: string }, ...rest: unknown[]) => {
              if (!killed && typeof options === 'object' && isStatement(options.sql)) await kill(inner.threadId);
              return (inner.query as (...args: unknown[]) => unknown)(options, ...rest);
            };
          },
        });
      };
    },
  });
  return { pool, killed: () => killed };
}
