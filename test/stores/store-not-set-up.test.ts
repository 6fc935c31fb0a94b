// A store whose table (schema, database) is missing is a configuration error, not an outage: every
// delivery is answered 500 CONFIGURATION_ERROR `store_not_set_up` with the fix in the message, and the
// default log (no `logger`) says so once on console.warn instead of a driver error per delivery. Over
// HTTP on the PostgreSQL, MySQL, SQLite and DynamoDB stores, and in a worker in answer-fast mode.
// (They once answered 503 store_unavailable, and wrote the driver's error each time.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, createReceiver, type IdempotencyStore, type Receiver, type ReceiverOptions } from '@hookline/core';
import { dynamoDbStore } from '@hookline/dynamodb';
import { mysqlStore } from '@hookline/mysql';
import { postgresStore } from '@hookline/postgres';
import { sqliteStore } from '@hookline/sqlite';
import { createDelivery, createSignedPayload, memoryQueue, requireServer } from '@hookline/testing';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { DATABASE_URL } from '../support/servers';
import { MYSQL_URL, openSqlite, startDynamo, uniqueName } from './support/open-stores';

const SECRET = 'whsec_store_not_set_up';
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

let warn: MockInstance<typeof console.warn>;
let error: MockInstance<typeof console.error>;
beforeEach(() => {
  warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  error = vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A receiver over `store` behind node:http on 127.0.0.1. */
async function serve(options: Partial<ReceiverOptions>): Promise<{ url: string; receiver: Receiver }> {
  const receiver = createReceiver({ secret: SECRET, ...options } as ReceiverOptions);
  receiver.on('message.delivered', () => {});
  const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, receiver };
}

async function send(url: string): Promise<{ status: number; error: { code: string; message: string; details: unknown } }> {
  const { headers, body } = createSignedPayload(createDelivery('message.delivered'), SECRET);
  const response = await fetch(url, { method: 'POST', headers, body: body as string });
  return { status: response.status, error: ((await response.json()) as { error: never }).error };
}

/** Two deliveries to a receiver without a logger: both refused as configuration, one line on console.warn, nothing on console.error. */
async function expectConfigurationError(store: IdempotencyStore, fix: RegExp): Promise<void> {
  const { url } = await serve({ store });
  for (let i = 0; i < 2; i++) {
    const answer = await send(url);
    expect(answer.status).toBe(500);
    expect(answer.error).toMatchObject({ code: 'CONFIGURATION_ERROR', details: { reason: 'store_not_set_up' } });
    expect(answer.error.message).toMatch(fix);
  }
  expect(error).not.toHaveBeenCalled();
  expect(warn).toHaveBeenCalledTimes(1);
  expect(String(warn.mock.calls[0]?.[0])).toMatch(/^\[hookline\] refused a request with 500 CONFIGURATION_ERROR \(store_not_set_up\)/);
  expect(String(warn.mock.calls[0]?.[0])).toMatch(fix);
}

const postgres = await requireServer('PostgreSQL', DATABASE_URL);
const mariadb = await requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 });

describe('a store that is not set up, synchronous mode', () => {
  it.skipIf(!postgres.reachable)('PostgreSQL: a schema and table nobody created (setup() never ran)', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    closers.push(() => pool.end());
    await expectConfigurationError(postgresStore({ client: pool, schema: uniqueName('never') }), /await store\.setup\(\)/);
  });

  it.skipIf(!mariadb.reachable)("MySQL: a table nobody created, and a connection's database nobody created", async () => {
    const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2 });
    closers.push(() => pool.end());
    await expectConfigurationError(mysqlStore({ client: pool, table: uniqueName('never') }), /ER_NO_SUCH_TABLE.*await store\.setup\(\)/);
    warn.mockClear();
    const url = new URL(MYSQL_URL);
    url.pathname = `/${uniqueName('never')}`;
    const noDatabase = mysql.createPool({ uri: url.href, connectionLimit: 1 });
    closers.push(() => noDatabase.end());
    await expectConfigurationError(mysqlStore({ client: noDatabase }), /ER_BAD_DB_ERROR.*Create the database/);
  });

  it('SQLite: a table dropped after the store made it', async () => {
    const db = openSqlite();
    closers.push(async () => db.close());
    const store = sqliteStore({ client: db as never, table: 'dropped', pruneEveryMs: 0 });
    db.exec('DROP TABLE dropped');
    await expectConfigurationError(store, /no such table: dropped.*open the store again/);
  });

  it('DynamoDB: a table nobody created', async () => {
    const dynamo = await startDynamo();
    closers.push(dynamo.close);
    await expectConfigurationError(dynamoDbStore({ client: dynamo.client as never, table: uniqueName('never') }), /await store\.setup\(\)/);
  });

  it.skipIf(!postgres.reachable)('with a logger: a warn line per refusal with the fix, no error line with the driver error', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    closers.push(() => pool.end());
    const logger = { warn: vi.fn(), error: vi.fn() };
    const { url } = await serve({ store: postgresStore({ client: pool, table: uniqueName('never') }), logger });
    expect((await send(url)).status).toBe(500);
    expect(logger.error).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0]?.[0]).toMatchObject({
      status: 500,
      code: 'CONFIGURATION_ERROR',
      details: { reason: 'store_not_set_up' },
    });
    expect(logger.warn.mock.calls[0]?.[1]).toMatch(/await store\.setup\(\)/);
  });
});

describe('a store that is not set up, answer-fast mode', () => {
  it.skipIf(!postgres.reachable)(
    "queues the delivery (202), and the worker's job fails with the fix, said once on console.warn",
    async () => {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
      closers.push(() => pool.end());
      const queue = memoryQueue({ attempts: 3, backoff: { type: 'fixed', delayMs: 1 } });
      const { url, receiver } = await serve({ store: postgresStore({ client: pool, table: uniqueName('never') }), queue });
      const { headers, body } = createSignedPayload(createDelivery('message.delivered'), SECRET);
      const answer = await fetch(url, { method: 'POST', headers, body: body as string });
      expect([answer.status, await answer.json()]).toEqual([202, { ok: true, queued: true }]);
      const worker = receiver.work();
      closers.push(() => worker.close());
      await queue.idle();
      const [job] = queue.jobs();
      expect(job).toMatchObject({ state: 'dead', attemptsMade: 3 });
      expect(job?.lastError).toMatch(/was not processed \(The idempotency store is not set up.*await store\.setup\(\)/);
      expect(error).not.toHaveBeenCalled();
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/500 CONFIGURATION_ERROR \(store_not_set_up\).*await store\.setup\(\)/);
    },
  );
});
