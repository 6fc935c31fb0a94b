// The MySQL store's transaction() (transactional handlers) on the shared server, in tables of this run's
// own, dropped afterwards: the shared SQL transaction tests (@hookline/testing/conformance), for which
// this file gives how a row is written and counted and how a connection is ended, and what it is
// offered with.
import { randomUUID } from 'node:crypto';
import { requireServer } from '@hookline/testing';
import { describeSqlTransactions } from '@hookline/testing/conformance';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlStore } from './mysql-store';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const server = await requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 });
const table = `hookline_txv_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const rowsTable = `\`${table}_rows\``;
describe.skipIf(!server.reachable)('mysqlStore: transaction()', () => {
  const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 4 });
  const store = mysqlStore({ client: pool, table });

  beforeAll(async () => {
    await store.setup();
    await pool.query(`CREATE TABLE ${rowsTable} (id VARCHAR(200) PRIMARY KEY) ENGINE = InnoDB`);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_versions\`, ${rowsTable}`);
    await pool.end();
  });

  it('is offered with a Pool only: a lone Connection has no connection to lend', async () => {
    const connection = await mysql.createConnection({ uri: MYSQL_URL });
    try {
      expect(mysqlStore({ client: connection, table }).transaction).toBeUndefined();
    } finally {
      await connection.end();
    }
  });

  describeSqlTransactions({
    store,
    insert: (connection, id) => (connection as mysql.PoolConnection).query(`INSERT INTO ${rowsTable} (id) VALUES (?)`, [id]),
    rowsOf: async (id) => ((await pool.query(`SELECT count(*) AS n FROM ${rowsTable} WHERE id = ?`, [id]))[0] as { n: number }[])[0]!.n,
    counting() {
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
      return { store: mysqlStore({ client: counting, table }), borrowed: () => borrowed };
    },
    killingBefore(isStatement) {
      const lending = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
      const killing = killingBefore(lending, pool, isStatement);
      return { store: mysqlStore({ client: killing.pool, table }), killed: killing.killed, close: () => lending.end() };
    },
  });
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
