// Per-operation latency of the stores, in process: one claim then one complete per delivery (what the
// receiver does for each new delivery: two round trips for Redis and Postgres), measured in interleaved
// rounds so drift hits every store alike. Gives medians and p99 of claim, complete and the pair, plus
// pairs/s with 50 deliveries in flight. suite.ts uses it; alone it prints its table:
//
//   pnpm --filter @hookline/bench exec tsx --conditions=@hookline/source src/stores/store-latency.ts
//
// REDIS_URL / DATABASE_URL as in the tests; a store whose server is unreachable is left out (said so).
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { IdempotencyStore } from '@hookline/core';
import { formatNumber, markdownTable, median, quantile } from '../lib/stats';
import { openStore, type RunLocation, type StoreKind, storeLabel } from './open-store';
import { openRunScope } from './run-scope';

const IN_FLIGHT = 50;
const RETENTION = 72 * 3_600_000;

export interface LatencyOptions {
  rounds: number;
  perRound: number;
}

/** One store's figures: milliseconds per operation, and pairs per second with IN_FLIGHT in flight. */
export interface LatencyResult {
  claim: number[];
  complete: number[];
  pair: number[];
  rates: number[];
}

const key = () => `hookline:wdl_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

async function sequential(store: IdempotencyStore, perRound: number, into: LatencyResult): Promise<void> {
  for (let i = 0; i < perRound; i++) {
    const k = key();
    const t0 = performance.now();
    await store.claim(k, 'token', 30_000);
    const t1 = performance.now();
    await store.complete(k, 'token', RETENTION);
    const t2 = performance.now();
    into.claim.push(t1 - t0);
    into.complete.push(t2 - t1);
    into.pair.push(t2 - t0);
  }
}

async function concurrent(store: IdempotencyStore, perRound: number): Promise<number> {
  let left = perRound;
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
  return perRound / ((performance.now() - started) / 1000);
}

/** Measures every store in `kinds`, each through a client of its own (a pg Pool as large as IN_FLIGHT). */
export async function measureStoreLatency(
  kinds: readonly StoreKind[],
  where: RunLocation,
  options: LatencyOptions,
): Promise<Map<StoreKind, LatencyResult>> {
  const opened = await Promise.all(kinds.map(async (kind) => ({ kind, ...(await openStore(kind, where, IN_FLIGHT)) })));
  const results = new Map<StoreKind, LatencyResult>(kinds.map((kind) => [kind, { claim: [], complete: [], pair: [], rates: [] }]));
  try {
    for (const s of opened) await sequential(s.store, options.perRound, { claim: [], complete: [], pair: [], rates: [] }); // warm-up
    for (let round = 0; round < options.rounds; round++) {
      // Interleaved, and the order rotates each round.
      for (let i = 0; i < opened.length; i++) {
        const s = opened[(round + i) % opened.length]!;
        const r = results.get(s.kind)!;
        await sequential(s.store, options.perRound, r);
        r.rates.push(await concurrent(s.store, options.perRound));
      }
    }
  } finally {
    await Promise.all(opened.map((s) => s.close()));
  }
  return results;
}

const us = (ms: number) => `${formatNumber(ms * 1000)} µs`;

/** The latency table. */
export function latencyTable(results: Map<StoreKind, LatencyResult>): string {
  const rows = [...results].map(([kind, r]) => [
    storeLabel(kind),
    us(median(r.claim)),
    us(median(r.complete)),
    us(median(r.pair)),
    us(quantile(r.pair, 0.99)),
    formatNumber(median(r.rates)),
  ]);
  return markdownTable(
    [
      'store',
      'claim p50',
      'complete p50',
      'claim + complete p50',
      'claim + complete p99',
      `pairs/s at ${IN_FLIGHT} in flight (median round)`,
    ],
    rows,
  );
}

// Run alone: measure and print the table.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const scope = await openRunScope();
  try {
    for (const note of scope.notes) console.warn(note);
    const options = { rounds: Number(process.env.ROUNDS ?? 5), perRound: Number(process.env.PER_ROUND ?? 1_000) };
    const results = await measureStoreLatency(scope.kinds, scope, options);
    console.log(`\nstore latency: ${options.rounds} interleaved rounds x ${options.perRound} deliveries, Node ${process.version}\n`);
    console.log(latencyTable(results));
  } finally {
    await scope.cleanup();
  }
}
