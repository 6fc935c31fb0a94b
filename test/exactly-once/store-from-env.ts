// The shared store of a receiver process of the exactly-once tests, from its environment: STORE
// (redis | postgres), STORE_URL, and STORE_PREFIX (Redis) or STORE_SCHEMA (Postgres).
import type { IdempotencyStore } from '@hookline/core';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { env } from './sqlite-harness';

export async function storeFromEnv(): Promise<IdempotencyStore> {
  if (env('STORE') === 'redis') {
    // Fail fast while Redis is away (503 at once, the service retries) and reconnect quickly.
    const client = new Redis(env('STORE_URL'), {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 100,
    });
    client.on('error', () => {});
    // Without the offline queue, commands before the first connection fail: listen once it is ready.
    await new Promise((resolve) => client.once('ready', resolve));
    return redisStore({ client, prefix: env('STORE_PREFIX') });
  }
  // A generous connect timeout: a pool-queue wait that times out makes `complete` fail after a
  // successful handler, and a completion the store never recorded can run again once the lease ends.
  // (A cut connection still fails at once: the proxy refuses it.)
  const pool = new pg.Pool({
    connectionString: env('STORE_URL'),
    max: 6,
    connectionTimeoutMillis: 15_000,
    options: '-c synchronous_commit=off', // these tests are about receivers' crashes, not Postgres's
  });
  pool.on('error', () => {});
  await pool.query('SELECT 1');
  return postgresStore({ client: pool, schema: env('STORE_SCHEMA') });
}
