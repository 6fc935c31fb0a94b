/**
 * The stores this suite compares, opened the same way in the HTTP server processes and in the
 * in-process latency measurement: the memory store, the Redis store over each client library it
 * supports, and the Postgres store.
 */
import { type IdempotencyStore, memoryStore } from '@hookline/core';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';
import { packageVersion } from '../lib/versions';

/** Where the shared servers are (the same defaults as the tests). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Every store contender, memory first: it is the baseline of the ratios. */
export const STORE_KINDS = ['memory', 'node-redis', 'ioredis', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** Which server a store needs (none for memory). */
export const serverOf = (kind: StoreKind): 'Redis' | 'PostgreSQL' | undefined =>
  kind === 'memory' ? undefined : kind === 'postgres' ? 'PostgreSQL' : 'Redis';

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
  }
}

/** Where this run keeps its records, so it never meets another run's and can delete them all after. */
export interface RunLocation {
  /** Redis key prefix. */
  prefix: string;
  /** Postgres schema (created by the suite before any store opens). */
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
      return { store: postgresStore({ pool, schema: where.schema }), close: () => pool.end() };
    }
  }
}
