/**
 * The stores this suite compares, opened the same way in the HTTP server processes and in the
 * in-process latency measurement: the memory store, the Redis store over each client library it
 * supports, and the Postgres store.
 */
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type IdempotencyStore, memoryStore } from '@hookline/core';
import { mysqlStore } from '@hookline/mysql';
import { postgresStore } from '@hookline/postgres';
import { type SqliteDatabaseLike, sqliteStore } from '@hookline/sqlite';
import mysql from 'mysql2/promise';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';
import { packageVersion } from '../lib/versions';

/** Where the shared servers are (the same defaults as the tests). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** The SQLite file of a run (its `-wal` and `-shm` beside it). */
export const sqliteFile = (where: RunLocation): string => join(tmpdir(), `${where.schema}.db`);

/** node:sqlite where this Node has it (22.13+), better-sqlite3 otherwise. */
const nodeSqlite = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite') as
  | { DatabaseSync: new (path: string) => SqliteDatabaseLike & { close(): void } }
  | undefined;
export const sqliteDriver = nodeSqlite
  ? `node:sqlite (Node ${process.versions.node})`
  : `better-sqlite3 ${packageVersion('better-sqlite3')}`;
export function openSqlite(path: string): SqliteDatabaseLike & { close(): void } {
  if (nodeSqlite) return new nodeSqlite.DatabaseSync(path);
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => SqliteDatabaseLike & { close(): void };
  return new Database(path);
}

/** Every store contender, memory first: it is the baseline of the ratios. */
export const STORE_KINDS = ['memory', 'node-redis', 'ioredis', 'postgres', 'sqlite', 'mysql'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** Which server a store needs (none for memory). */
export const serverOf = (kind: StoreKind): 'Redis' | 'PostgreSQL' | 'MySQL' | undefined =>
  kind === 'memory' || kind === 'sqlite' ? undefined : kind === 'postgres' ? 'PostgreSQL' : kind === 'mysql' ? 'MySQL' : 'Redis';

/** A row label naming the client library and its installed version. */
export function storeLabel(kind: StoreKind): string {
  switch (kind) {
    case 'memory':
      return 'memory store';
    case 'node-redis':
      return `Redis store, node-redis ${packageVersion('redis')}`;
    case 'ioredis':
      return `Redis store, ioredis ${packageVersion('ioredis')}`;
    case 'postgres':
      return `Postgres store, pg ${packageVersion('pg')}`;
    case 'sqlite':
      return `SQLite store, ${sqliteDriver}`;
    case 'mysql':
      return `MySQL store, mysql2 ${packageVersion('mysql2')}`;
  }
}

/** Where this run keeps its records, so it never meets another run's and can delete them all after. */
export interface RunLocation {
  /** Redis key prefix. */
  prefix: string;
  /** Postgres schema (created by the suite before any store opens); also the MySQL table's and the SQLite file's name. */
  schema: string;
}

export interface OpenedStore {
  store: IdempotencyStore;
  /** Closes the client this opened (never deletes records: the suite does that once, at the end). */
  close(): Promise<void>;
}

/** Opens one store with a client of its own. `pgPoolMax`: the pg Pool's `max` (pg's default is 10). */
export async function openStore(kind: StoreKind, where: RunLocation, pgPoolMax = 10): Promise<OpenedStore> {
  switch (kind) {
    case 'memory':
      // Room for every delivery of a run: eviction would be measured otherwise.
      return { store: memoryStore({ maxEntries: 5_000_000 }), close: async () => {} };
    case 'node-redis': {
      const client = await createClient({ url: REDIS_URL }).connect();
      return { store: redisStore({ client, prefix: where.prefix }), close: () => client.close() };
    }
    case 'ioredis': {
      const client = new Redis(REDIS_URL);
      return {
        store: redisStore({ client, prefix: where.prefix }),
        close: async () => {
          await client.quit();
        },
      };
    }
    case 'postgres': {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: pgPoolMax });
      return { store: postgresStore({ client: pool, schema: where.schema }), close: () => pool.end() };
    }
    case 'sqlite': {
      const db = openSqlite(sqliteFile(where));
      return { store: sqliteStore({ client: db, pruneEveryMs: 0 }), close: async () => db.close() };
    }
    case 'mysql': {
      const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: pgPoolMax });
      return { store: mysqlStore({ client: pool, table: where.schema }), close: () => pool.end() };
    }
  }
}
