/**
 * Handler-level guarantees suite: what `completion: 'handler'` (3 named handlers) and an ordering guard
 * (one handler with `order`) cost per delivery, against plain delivery completion with the same
 * handlers, on the memory store and on Redis (node-redis v5). `receiver.handle` in process, 1 KB
 * bodies, every call a new delivery that runs its handlers (a fresh store or key prefix per pass).
 * Memory: one delivery at a time, CPU time per delivery. Redis: 50 deliveries in flight, wall time and
 * the receiver process's CPU time per delivery. Interleaved slots, the order rotating every round.
 * Prints one markdown section.
 *
 * HOOKLINE_BENCH_GUARANTEES_ROUNDS (default 8), HOOKLINE_BENCH_GUARANTEES_SLOT_MS (default 150),
 * HOOKLINE_BENCH_GUARANTEES_IN_FLIGHT (default 50); REDIS_URL.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { createReceiver, type IdempotencyStore, memoryStore, type Receiver, type ReceiverInput } from '@hookline/core';
import { redisStore } from '@hookline/redis';
import { createClient } from 'redis';
import { BENCH_SECRET, signedHeaders, signedPool } from '../lib/payloads';
import { formatNumber, markdownTable, median, spreadPercent } from '../lib/stats';
import { packageVersion } from '../lib/versions';

const ROUNDS = Number(process.env.HOOKLINE_BENCH_GUARANTEES_ROUNDS ?? 8);
const SLOT_MS = Number(process.env.HOOKLINE_BENCH_GUARANTEES_SLOT_MS ?? 150);
const IN_FLIGHT = Number(process.env.HOOKLINE_BENCH_GUARANTEES_IN_FLIGHT ?? 50);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const POOL_SIZE = 1_000;

interface Variant {
  name: string;
  /** The variant it is compared with (same handlers, plain delivery completion). */
  baseline?: string;
  /** Store operations per delivery, for the table. */
  operations: string;
  build(store: IdempotencyStore): Receiver;
}

let ran = 0;
const work = () => {
  ran++;
};
const variants: Variant[] = [
  {
    name: '3 handlers, delivery completion',
    operations: 'claim + complete',
    build: (store) => createReceiver({ secret: BENCH_SECRET, store }).on('*', work).on('*', work).on('*', work),
  },
  {
    name: "3 handlers, completion: 'handler'",
    baseline: '3 handlers, delivery completion',
    operations: '(claim + complete) × 4',
    build: (store) =>
      createReceiver({ secret: BENCH_SECRET, store, completion: 'handler' })
        .on('*', work, { name: 'one' })
        .on('*', work, { name: 'two' })
        .on('*', work, { name: 'three' }),
  },
  {
    name: '1 handler, delivery completion',
    operations: 'claim + complete',
    build: (store) => createReceiver({ secret: BENCH_SECRET, store }).on('*', work),
  },
  {
    name: '1 handler with an ordering guard',
    baseline: '1 handler, delivery completion',
    operations: 'claim + complete + lock claim + readVersion + advanceVersion + lock release',
    // Each delivery its own resource: the guard always runs the handler (no stale skip to flatter it).
    build: (store) =>
      createReceiver({ secret: BENCH_SECRET, store }).on('*', work, { name: 'ordered', order: { key: (d) => d.deliveryId } }),
  },
];

function inputs(): ReceiverInput[] {
  return signedPool('message.inbound', 1024, POOL_SIZE).map((body) => ({ body: body.bytes, headers: signedHeaders(body) }));
}

/** Runs `pool` through `receiver` with `inFlight` calls at a time; throws on any answer but 200. */
async function pass(receiver: Receiver, pool: readonly ReceiverInput[], inFlight: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < pool.length) {
      const answer = await receiver.handle(pool[next++] as ReceiverInput);
      if (answer.status !== 200) throw new Error(`guarantees suite: answered ${answer.status} ${answer.body}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

interface Sample {
  cpuNs: number;
  wallNs: number;
}

/** Passes until SLOT_MS has passed, each over a fresh store; CPU and wall ns per delivery. */
async function slot(
  variant: Variant,
  pool: readonly ReceiverInput[],
  freshStore: () => IdempotencyStore,
  inFlight: number,
): Promise<Sample> {
  let calls = 0;
  let wall = 0n;
  let cpuMicros = 0;
  const budget = BigInt(SLOT_MS) * 1_000_000n;
  while (wall < budget) {
    const receiver = variant.build(freshStore()).onError((error) => {
      throw error;
    });
    const before = ran;
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    await pass(receiver, pool, inFlight);
    const used = process.cpuUsage(cpu);
    wall += process.hrtime.bigint() - start;
    cpuMicros += used.user + used.system;
    if (ran === before) throw new Error('guarantees suite: no handler ran');
    calls += pool.length;
  }
  return { cpuNs: (cpuMicros * 1000) / calls, wallNs: Number(wall) / calls };
}

async function measure(label: string, freshStore: () => IdempotencyStore, inFlight: number) {
  const samples = new Map<Variant, Sample[]>(variants.map((v) => [v, []]));
  for (let round = -1; round < ROUNDS; round++) {
    const pool = inputs(); // fresh ids and timestamps each round
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(i + Math.max(0, round)) % variants.length] as Variant;
      const sample = await slot(variant, pool, freshStore, inFlight);
      if (round >= 0) samples.get(variant)?.push(sample);
    }
    if (round >= 0) process.stderr.write(`  guarantees ${label} round ${round + 1}/${ROUNDS}\n`);
  }
  return samples;
}

/** Median over rounds of variant/baseline, each round's pair measured back to back. */
function ratio(samples: Map<Variant, Sample[]>, variant: Variant, pick: (s: Sample) => number): number {
  const base = variants.find((v) => v.name === variant.baseline);
  if (base === undefined) return 1;
  const mine = samples.get(variant) ?? [];
  const theirs = samples.get(base) ?? [];
  return median(mine.map((s, i) => pick(s) / pick(theirs[i] as Sample)));
}

function table(samples: Map<Variant, Sample[]>, withWall: boolean): string {
  const rows = variants.map((variant) => {
    const values = samples.get(variant) ?? [];
    const cpu = values.map((s) => s.cpuNs / 1000);
    const wall = values.map((s) => s.wallNs / 1000);
    return [
      variant.name,
      variant.operations,
      `${formatNumber(median(cpu), 2)} (±${spreadPercent(cpu).toFixed(1)}%)`,
      ...(withWall ? [`${formatNumber(median(wall), 2)} (±${spreadPercent(wall).toFixed(1)}%)`] : []),
      variant.baseline === undefined ? '—' : `${ratio(samples, variant, (s) => s.cpuNs).toFixed(2)}×`,
      ...(withWall ? [variant.baseline === undefined ? '—' : `${ratio(samples, variant, (s) => s.wallNs).toFixed(2)}×`] : []),
    ];
  });
  const header = withWall
    ? [
        'variant',
        'store operations / delivery',
        'CPU µs / delivery',
        `wall µs / delivery at ${IN_FLIGHT} in flight`,
        'CPU vs plain',
        'wall vs plain',
      ]
    : ['variant', 'store operations / delivery', 'CPU µs / delivery', 'CPU vs plain'];
  return markdownTable(header, rows);
}

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 6379), hostname);
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function main(): Promise<void> {
  const memory = await measure('memory', () => memoryStore(), 1);
  const lines = [
    "## Handler-level guarantees: the cost of `completion: 'handler'` and of an ordering guard",
    '',
    `\`receiver.handle\` in process with 1 KB bodies, every call a new delivery whose handlers run (a fresh memory store, or a fresh Redis key prefix, for every pass over the ${POOL_SIZE} bodies). Three no-op handlers with \`completion: 'handler'\` against the same three with delivery completion; one no-op handler with an ordering guard (each delivery its own resource, so the guard never skips it) against the same handler without. ${ROUNDS} interleaved rounds of ${SLOT_MS} ms per variant after a warm-up round, the order rotating every round; medians over rounds, spread ± half the inter-quartile range; "vs plain" is the median over rounds of the ratio to the plain variant measured in the same round. Memory store: one delivery at a time, CPU time (user + system) per delivery. Redis (node-redis ${packageVersion('redis')}, local server): ${IN_FLIGHT} deliveries in flight, wall time per delivery (throughput) and the receiver process's CPU time per delivery (Redis's own CPU not counted).`,
    '',
    '### Memory store',
    '',
    table(memory, false),
    '',
  ];
  const byName = (name: string) => variants.find((v) => v.name === name) as Variant;
  const handlerRatio = ratio(memory, byName("3 handlers, completion: 'handler'"), (s) => s.cpuNs);
  const orderRatio = ratio(memory, byName('1 handler with an ordering guard'), (s) => s.cpuNs);
  if (await reachable(REDIS_URL)) {
    const client = await createClient({ url: REDIS_URL }).connect();
    const prefixes: string[] = [];
    const run = randomUUID().slice(0, 8);
    try {
      const redis = await measure(
        'Redis',
        () => {
          const prefix = `hookline-bench-guarantees-${run}-${prefixes.length}:`;
          prefixes.push(prefix);
          return redisStore({ client, prefix });
        },
        IN_FLIGHT,
      );
      lines.push('### Redis store', '', table(redis, true), '');
      const wallHandler = ratio(redis, byName("3 handlers, completion: 'handler'"), (s) => s.wallNs);
      const wallOrder = ratio(redis, byName('1 handler with an ordering guard'), (s) => s.wallNs);
      lines.push(
        `Script calls per delivery on Redis: 2 with delivery completion, 8 with per-handler completion and 3 handlers (${wallHandler.toFixed(2)}× the wall time), 6 with an ordering guard (${wallOrder.toFixed(2)}×). With ${IN_FLIGHT} deliveries in flight the round trips of different deliveries overlap, so the wall time grows less than the number of calls; the calls of one delivery are sequential.`,
        '',
      );
    } finally {
      // Every pass's prefix starts with the run's: one scan deletes them all.
      for await (const keys of client.scanIterator({ MATCH: `hookline-bench-guarantees-${run}-*`, COUNT: 1_000 })) {
        if (keys.length > 0) await client.unlink(keys);
      }
      await client.close();
    }
  } else {
    lines.push(`Redis at ${REDIS_URL} was unreachable: the Redis store was not measured.`, '');
  }
  lines.push(
    `**Measured: on the memory store, \`completion: 'handler'\` with 3 handlers costs ${handlerRatio.toFixed(3)}× the CPU of delivery completion, an ordering guard ${orderRatio.toFixed(3)}× (no target set).**`,
    '',
  );
  process.stdout.write(lines.join('\n'));
}

await main();
