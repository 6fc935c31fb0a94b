// The Postgres store's transaction(), with and without a version advance, through the shared conformance tests
// (@hookline/testing/conformance): on the shared server, in a schema of this run's own, dropped afterwards. What
// is the database's own here: how a row is written and counted, and how a connection is ended.
import { randomUUID } from 'node:crypto';
import { requireServer } from '@hookline/testing';
import { describeSqlTransactions } from '@hookline/testing/conformance';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { postgresStore } from './postgres-store';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_txv_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
describe.skipIf(!server.reachable)('postgresStore: transaction() (the SQL transaction conformance tests)', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  const store = postgresStore({ client: pool, schema });
  const rows = `"${schema}".rows`;

  beforeAll(async () => {
    await store.setup();
    await pool.query(`CREATE TABLE ${rows} (id text PRIMARY KEY)`);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  describeSqlTransactions({
    store,
    insert: (tx, id) => (tx as pg.PoolClient).query(`INSERT INTO ${rows} (id) VALUES ($1)`, [id]),
    rowsOf: async (id) => ((await pool.query(`SELECT count(*)::int AS n FROM ${rows} WHERE id = $1`, [id])).rows[0] as { n: number }).n,
    counting() {
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
      return { store: postgresStore({ client: counting, schema }), borrowed: () => borrowed };
    },
    killingBefore(isStatement) {
      const lending = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      const killing = killingBefore(lending, pool, isStatement);
      return {
        store: postgresStore({ client: killing.pool, schema }),
        killed: killing.killed,
        close: () => lending.end(),
        check: () => expect(lending.totalCount).toBe(0), // the dead connection was discarded
      };
    },
    afterCommit: () => expect(pool.totalCount - pool.idleCount).toBe(0), // the connection went back
  });
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
