// For tests only (not shipped: excluded in package.json "files" and not exported). The Postgres side
// of the SQL transaction conformance tests (`describeSqlTransactions`): how a row is written and
// counted, and how a lent connection is ended. The store's own transaction test runs them over
// postgresStore; the conformance mutants (test/conformance) over a broken transaction() around it.
import type { IdempotencyStore } from '@hookline/core';
import type { SqlTransactionsUnderTest } from '@hookline/testing/conformance';
import pg from 'pg';
import { expect } from 'vitest';
import { postgresStore } from './postgres-store';

export interface PostgresTransactionsSetup {
  databaseUrl: string;
  /** The pool the store under test lends connections from; the rows are counted through it too. */
  pool: pg.Pool;
  schema: string;
  /** The table (schema-qualified and quoted) the test's work writes its rows to, with a text `id` primary key. */
  rows: string;
  /** The store under test over a pool: postgresStore by default. */
  storeOf?: (pool: pg.Pool) => IdempotencyStore;
}

/** The subject of `describeSqlTransactions` for a Postgres store over `setup.pool`. */
export function postgresTransactionsSubject(setup: PostgresTransactionsSetup): SqlTransactionsUnderTest {
  const { databaseUrl, pool, schema, rows } = setup;
  const storeOf = setup.storeOf ?? ((client: pg.Pool) => postgresStore({ client, schema }));
  return {
    store: storeOf(pool),
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
      return { store: storeOf(counting), borrowed: () => borrowed };
    },
    killingBefore(isStatement) {
      const lending = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      const killing = killingBefore(lending, pool, isStatement);
      return {
        store: storeOf(killing.pool),
        killed: killing.killed,
        close: () => lending.end(),
        check: () => expect(lending.totalCount).toBe(0), // the dead connection was discarded
      };
    },
    afterCommit: () => expect(pool.totalCount - pool.idleCount).toBe(0), // the connection went back
  };
}

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
