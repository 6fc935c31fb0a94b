// One receiver process of the exactly-once tests: node:http bridge, a shared Redis or Postgres store,
// and a handler that records each successful run in Postgres (a unique deliveryId and a run counter).
// Prints {"listening":port} once, then {"started":deliveryId,"attempt":n} whenever a handler starts.
//
// Delivery data steers the handler: `failFirst` throws on the store's attempt 1, `hangFirst` never
// returns on attempt 1 (the test SIGKILLs the process while it hangs).
import type { IdempotencyStore } from '@hookline/core';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { env, serveReceiver } from './sqlite-harness';

let store: IdempotencyStore;
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
  store = redisStore({ client, prefix: env('STORE_PREFIX') });
} else {
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
  store = postgresStore({ client: pool, schema: env('STORE_SCHEMA') });
}

// The receiver, its recording handler and the node:http bridge: sqlite-harness.ts's, which the SQLite
// and Redis Cluster receivers share.
serveReceiver(store);
