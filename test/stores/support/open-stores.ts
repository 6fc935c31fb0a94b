// Every store that runs in Node, opened on the servers the suite shares, each in a table (schema,
// prefix) of its own that `close()` removes: for tests that run one scenario over all of them.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type IdempotencyStore, memoryStore } from '@hookline/core';
import { dynamoDbStore } from '@hookline/dynamodb';
import { mysqlStore } from '@hookline/mysql';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { sqliteStore } from '@hookline/sqlite';
import { requireServer } from '@hookline/testing';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { DATABASE_URL, REDIS_URL } from '../../support/servers';

export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** A store opened for one test, and how to remove what it made. */
export interface OpenedStore {
  store: IdempotencyStore;
  close(): Promise<void>;
}

/** A store kind: its name, the server it needs (undefined: none), and how to open one. */
export interface StoreKind {
  name: string;
  server?: { name: string; url: string; defaultPort?: number };
  open(): Promise<OpenedStore>;
}

/** A name no other test file uses. */
export const uniqueName = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;

// The packages' own dev dependencies (dynalite, the DynamoDB client, the SQLite driver), loaded from
// where they are installed.
const requireFrom = (pkg: string) => createRequire(fileURLToPath(new URL(`../../../packages/${pkg}/package.json`, import.meta.url)));

/** SQLite through node:sqlite where Node has it (22.13+), better-sqlite3 otherwise. */
export function openSqlite(): { exec(sql: string): void; close(): void } {
  const nodeSqlite = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite') as
    | { DatabaseSync: new (path: string) => { exec(sql: string): void; close(): void } }
    | undefined;
  if (nodeSqlite !== undefined) return new nodeSqlite.DatabaseSync(':memory:');
  const Database = requireFrom('sqlite')('better-sqlite3') as new (path: string) => { exec(sql: string): void; close(): void };
  return new Database(':memory:');
}

/** dynalite (a DynamoDB implementation) on a free port of this process, and a client of it. */
export async function startDynamo(): Promise<{ client: { send(command: unknown): Promise<unknown> }; close(): Promise<void> }> {
  const dynalite = requireFrom('dynamodb')('dynalite') as (options: object) => Server;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { DynamoDBClient } = requireFrom('dynamodb')('@aws-sdk/client-dynamodb') as {
    DynamoDBClient: new (config: object) => { send(command: unknown): Promise<unknown>; destroy(): void };
  };
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  return {
    client,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const STORE_KINDS: StoreKind[] = [
  { name: 'memory', open: async () => ({ store: memoryStore(), close: async () => {} }) },
  {
    name: 'SQLite',
    open: async () => {
      const db = openSqlite();
      return { store: sqliteStore({ client: db as never, pruneEveryMs: 0 }), close: async () => db.close() };
    },
  },
  {
    name: 'Redis',
    server: { name: 'Redis', url: REDIS_URL },
    open: async () => {
      const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      const prefix = `${uniqueName('hookline_test')}:`;
      return {
        store: redisStore({ client, prefix }),
        close: async () => {
          const keys = await client.keys(`${prefix}*`);
          if (keys.length > 0) await client.del(...keys);
          client.disconnect();
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    server: { name: 'PostgreSQL', url: DATABASE_URL },
    open: async () => {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
      const schema = uniqueName('hookline_test');
      await pool.query(`CREATE SCHEMA ${schema}`);
      const store = postgresStore({ client: pool, schema });
      await store.setup();
      return {
        store,
        close: async () => {
          await pool.query(`DROP SCHEMA ${schema} CASCADE`);
          await pool.end();
        },
      };
    },
  },
  {
    name: 'MySQL',
    server: { name: 'MySQL/MariaDB', url: MYSQL_URL, defaultPort: 3306 },
    open: async () => {
      const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2 });
      const table = uniqueName('hookline_test');
      const store = mysqlStore({ client: pool, table });
      await store.setup();
      return {
        store,
        close: async () => {
          await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_versions`);
          await pool.end();
        },
      };
    },
  },
  {
    name: 'DynamoDB',
    open: async () => {
      const dynamo = await startDynamo();
      const store = dynamoDbStore({ client: dynamo.client as never, table: uniqueName('hookline-test') });
      await store.setup({ timeToLive: false }); // dynalite has no Time to Live
      return { store, close: dynamo.close };
    },
  },
];

/** Whether the kind's server answers (loud skip on a developer's machine, failure under CI=true). */
export async function reachable(kind: StoreKind): Promise<boolean> {
  if (kind.server === undefined) return true;
  const { name, url, defaultPort } = kind.server;
  return (await requireServer(name, url, defaultPort === undefined ? {} : { defaultPort })).reachable;
}
