// The MySQL store's transaction() where it is MySQL's own: what it is offered with. The behaviour every
// SQL store shares (commit, rollback, a lost lease, versions, a connection the server ends) is in
// transaction-conformance.test.ts.
import { requireServer } from '@hookline/testing';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { mysqlStore } from './mysql-store';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const server = await requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 });

describe.skipIf(!server.reachable)('mysqlStore: transaction()', () => {
  it('is offered with a Pool only: a lone Connection has no connection to lend', async () => {
    const connection = await mysql.createConnection({ uri: MYSQL_URL });
    try {
      expect(mysqlStore({ client: connection, table: 'hookline_unused' }).transaction).toBeUndefined();
    } finally {
      await connection.end();
    }
  });
});
