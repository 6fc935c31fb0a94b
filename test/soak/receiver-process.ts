// One receiver process of the soak test: node:http bridge + redisStore (ioredis) on a shared Redis;
// the handler fails 30% of the time at random, otherwise records the delivery in Postgres under a
// unique key (a re-run after a crash finds the row already there and is counted, not doubled).
// Env: PORT, REDIS_PORT, DATABASE_URL, SOAK_TABLE, SECRET, FAIL_RATE.
import { createServer } from 'node:http';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { redisStore } from '@hookline/redis';
import Redis from 'ioredis';
import pg from 'pg';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`receiver-process: ${name} is not set`);
  return value;
};
const table = env('SOAK_TABLE');
if (!/^[a-z0-9_]+$/.test(table)) throw new Error('receiver-process: bad table name');
const failRate = Number(process.env.FAIL_RATE ?? 0.3);

const redis = new Redis({
  host: '127.0.0.1',
  port: Number(env('REDIS_PORT')),
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  retryStrategy: () => 100,
});
redis.on('error', () => {}); // reconnects by itself; operations in between fail and the receiver answers 503
const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 4 });

const receiver = createReceiver({ secret: env('SECRET'), store: redisStore({ client: redis, prefix: `${table}:` }), leaseMs: 2_000 });
receiver.onError(() => {}); // the injected failures are expected; the test counts outcomes in Postgres
receiver.on('*', async (delivery, context) => {
  if (Math.random() < failRate) throw new Error('injected handler failure');
  const result = await pool.query(
    `INSERT INTO ${table} (delivery_id, event, attempt, pid) VALUES ($1, $2, $3, $4) ON CONFLICT (delivery_id) DO NOTHING`,
    [delivery.deliveryId, delivery.event, context.attempt, process.pid],
  );
  if (result.rowCount === 0)
    await pool.query(`INSERT INTO ${table}_reruns (delivery_id, pid) VALUES ($1, $2)`, [delivery.deliveryId, process.pid]);
});

const server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
server.keepAliveTimeout = 1_000;
server.listen(Number(env('PORT')), '127.0.0.1', () => process.stdout.write('ready\n'));
