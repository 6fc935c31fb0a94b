// Per-operation latency of the stores, in process: one claim then one complete per delivery (what the
// receiver does for each new delivery), measured in interleaved rounds so drift hits every store alike.
// Prints medians and p99 of claim, complete and the pair, plus pairs/s with 50 deliveries in flight.
//
//   pnpm --filter @hookline/bench exec tsx --conditions=@hookline/source src/stores/store-latency.ts
//
// REDIS_URL / DATABASE_URL as in the tests; a store whose server is unreachable is left out (said so).
import { randomUUID } from 'node:crypto';
import { memoryStore, type IdempotencyStore } from '@hookline/core';
import { postgresStore } from '@hookline/postgres';
import { redisStore } from '@hookline/redis';
import { probeTcp } from '@hookline/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const PER_ROUND = Number(process.env.PER_ROUND ?? 1_000);
const IN_FLIGHT = 50;
const run = randomUUID().slice(0, 8);

interface Subject {
  name: string;
  store: IdempotencyStore;
  close: () => Promise<unknown>;
}

async function subjects(): Promise<Subject[]> {
  const list: Subject[] = [{ name: 'memory', store: memoryStore(), close: async () => {} }];
  if ((await probeTcp(REDIS_URL)) === undefined) {
    const nodeRedis = await createClient({ url: REDIS_URL }).connect();
    list.push({
      name: 'redis (node-redis)',
      store: redisStore({ client: nodeRedis, prefix: `bench-${run}:` }),
      close: () => nodeRedis.close(),
    });
    const ioredis = new Redis(REDIS_URL);
    list.push({ name: 'redis (ioredis)', store: redisStore({ client: ioredis, prefix: `bench-${run}:` }), close: () => ioredis.quit() });
  } else console.warn(`Redis at ${REDIS_URL} unreachable: left out`);
  if ((await probeTcp(DATABASE_URL)) === undefined) {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: IN_FLIGHT });
    const schema = `hookline_bench_${run}`;
    const store = postgresStore({ pool, schema });
    await store.ensureSchema();
    list.push({
      name: 'postgres',
      store,
      close: async () => {
        await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
        await pool.end();
      },
    });
  } else console.warn(`PostgreSQL at ${DATABASE_URL} unreachable: left out`);
  return list;
}

const RETENTION = 72 * 3_600_000;
const key = () => `hookline:wdl_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

async function sequential(store: IdempotencyStore, samples: { claim: number[]; complete: number[]; pair: number[] }) {
  for (let i = 0; i < PER_ROUND; i++) {
    const k = key();
    const t0 = performance.now();
    await store.claim(k, 'token', 30_000);
    const t1 = performance.now();
    await store.complete(k, 'token', RETENTION);
    const t2 = performance.now();
    samples.claim.push(t1 - t0);
    samples.complete.push(t2 - t1);
    samples.pair.push(t2 - t0);
  }
}

async function concurrent(store: IdempotencyStore): Promise<number> {
  let left = PER_ROUND;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) {
        const k = key();
        await store.claim(k, 'token', 30_000);
        await store.complete(k, 'token', RETENTION);
      }
    }),
  );
  return PER_ROUND / ((performance.now() - started) / 1000);
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const median = (values: number[]) => quantile(values, 0.5);
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

const list = await subjects();
const results = new Map(
  list.map((s) => [s.name, { claim: [] as number[], complete: [] as number[], pair: [] as number[], rates: [] as number[] }]),
);
for (const s of list) await sequential(s.store, { claim: [], complete: [], pair: [] }); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  // Interleaved, and the order rotates each round.
  for (let i = 0; i < list.length; i++) {
    const s = list[(round + i) % list.length]!;
    const r = results.get(s.name)!;
    await sequential(s.store, r);
    r.rates.push(await concurrent(s.store));
  }
}
console.log(`\nstore latency: ${ROUNDS} interleaved rounds x ${PER_ROUND} deliveries, Node ${process.version}\n`);
console.log('| store | claim p50 | complete p50 | claim+complete p50 | p99 | pairs/s at 50 in flight (median round) |');
console.log('|---|---|---|---|---|---|');
for (const s of list) {
  const r = results.get(s.name)!;
  console.log(
    `| ${s.name} | ${us(median(r.claim))} | ${us(median(r.complete))} | ${us(median(r.pair))} | ${us(quantile(r.pair, 0.99))} | ${Math.round(median(r.rates)).toLocaleString('en-US')} |`,
  );
}
await Promise.all(list.map((s) => s.close()));
