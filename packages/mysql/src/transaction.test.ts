// The MySQL store's transaction() (transactional handlers), on the shared server: tables of this run's
// own, dropped afterwards.
import { createHmac, randomUUID } from 'node:crypto';
import { createReceiver, type ReceiverInput } from '@hookline/core';
import { requireServer } from '@hookline/testing';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlStore } from './mysql-store';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const server = await requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 });
const table = `hookline_tx_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const rowsTable = `\`${table}_rows\``;
const SECRET = 'whsec_transaction_test';
const LONG_MS = 60_000;

function signed(deliveryId: string): ReceiverInput {
  const body = Buffer.from(JSON.stringify({ event: 'message.delivered', timestamp: new Date().toISOString(), deliveryId, data: {} }));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
      'x-service-event': 'message.delivered',
      'x-service-delivery-id': deliveryId,
    },
  };
}

describe.skipIf(!server.reachable)('mysqlStore: transaction()', () => {
  const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 4 });
  const store = mysqlStore({ client: pool, table });
  const key = (label: string) => `tx:${label}:wdl_${randomUUID().replaceAll('-', '')}`;
  const rowsOf = async (id: string) =>
    ((await pool.query(`SELECT count(*) AS n FROM ${rowsTable} WHERE id = ?`, [id]))[0] as { n: number }[])[0]!.n;
  const insert = (connection: unknown, id: string) =>
    (connection as mysql.PoolConnection).query(`INSERT INTO ${rowsTable} (id) VALUES (?)`, [id]);

  beforeAll(async () => {
    await store.setup();
    await pool.query(`CREATE TABLE ${rowsTable} (id VARCHAR(200) PRIMARY KEY) ENGINE = InnoDB`);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_versions\`, ${rowsTable}`);
    await pool.end();
  });

  it('commits the work and the completion together', async () => {
    const k = key('commit');
    const t = randomUUID();
    await store.claim(k, t, LONG_MS);
    const answer = await store.transaction!(
      async (connection) => {
        await insert(connection, k);
        expect(await rowsOf(k)).toBe(0); // not visible before the commit
        return 'done';
      },
      { key: k, token: t, retentionMs: LONG_MS },
    );
    expect(answer).toEqual({ value: 'done', completed: true });
    expect(await rowsOf(k)).toBe(1);
    expect(await store.claim(k, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
  });

  it('rolls back and rethrows when the work throws, leaving the lease to its token', async () => {
    const k = key('throw');
    const t = randomUUID();
    await store.claim(k, t, LONG_MS);
    const failure = new Error('handler failed after its insert');
    await expect(
      store.transaction!(
        async (connection) => {
          await insert(connection, k);
          throw failure;
        },
        { key: k, token: t, retentionMs: LONG_MS },
      ),
    ).rejects.toBe(failure);
    expect(await rowsOf(k)).toBe(0);
    expect(await store.release(k, t)).toBe(true);
  });

  it('rolls back and answers completed: false when another claim took the lease over meanwhile', async () => {
    const k = key('lost');
    const t = randomUUID();
    await store.claim(k, t, 100);
    const answer = await store.transaction!(
      async (connection) => {
        await insert(connection, k);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect((await store.claim(k, randomUUID(), LONG_MS)).state).toBe('acquired');
        return 1;
      },
      { key: k, token: t, retentionMs: LONG_MS },
    );
    expect(answer).toEqual({ value: 1, completed: false });
    expect(await rowsOf(k)).toBe(0);
  });

  it('runs a transactional handler end to end: a failed attempt leaves no row, the retry commits one', async () => {
    const receiver = createReceiver({ secret: SECRET, store }).onError(() => {});
    let runs = 0;
    receiver.on(
      'message.delivered',
      async (delivery, context) => {
        runs++;
        await insert(context.transaction, delivery.deliveryId);
        if (runs === 1) throw new Error('fails after its insert');
      },
      { name: 'record', transactional: true },
    );
    const id = `wdl_${randomUUID().replaceAll('-', '')}`;
    expect((await receiver.handle(signed(id))).status).toBe(500);
    expect(await rowsOf(id)).toBe(0);
    expect((await receiver.handle(signed(id))).status).toBe(200);
    expect(await rowsOf(id)).toBe(1);
    expect((await receiver.handle(signed(id))).status).toBe(200);
    expect(runs).toBe(2);
  });

  it('is offered with a Pool only: a lone Connection has no connection to lend', async () => {
    const connection = await mysql.createConnection({ uri: MYSQL_URL });
    try {
      expect(mysqlStore({ client: connection, table }).transaction).toBeUndefined();
    } finally {
      await connection.end();
    }
  });
});
