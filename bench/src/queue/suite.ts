/**
 * Queue suite: what answer-fast mode buys and costs. (1) Time to the 2xx at a steady 200 deliveries/s
 * with handlers that take 2 s, synchronous mode vs BullMQ queue mode (open-loop load, latency from
 * each request's scheduled send time); (2) accepted deliveries/s through the node:http bridge with a
 * no-op handler, BullMQ queue mode vs synchronous mode, both over the Redis store (ioredis), autocannon,
 * interleaved rounds; (3) worker throughput with a no-op handler, jobs/s for one worker process, BullMQ
 * and pg-boss (each job's claim and completion in the store included). Prints one markdown section;
 * progress goes to stderr. Every key, queue and schema is this run's own and is deleted at the end.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { bullmqQueue } from '@hookline/bullmq';
import type { DeliveryQueue } from '@hookline/core/adapter';
import { pgBossQueue } from '@hookline/pg-boss';
import { createDelivery } from '@hookline/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type BenchServer, runLoad, startBenchServer, stopBenchServer } from '../lib/bench-process';
import { pinned, pinningNote } from '../lib/pinning';
import {
  formatMeasuredRatio,
  formatMeasuredWithCeiling,
  formatNumber,
  markdownTable,
  median,
  medianRoundRatio,
  spreadPercent,
} from '../lib/stats';
import { packageVersion } from '../lib/versions';

const here = dirname(fileURLToPath(import.meta.url));
const nodeArgs = ['--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--conditions'))];
const knob = (name: string, fallback: number) => Number(process.env[`HOOKLINE_BENCH_QUEUE_${name}`] ?? fallback);
const options = {
  latencyRounds: knob('LATENCY_ROUNDS', 2),
  latencySeconds: knob('LATENCY_SECONDS', 8),
  rate: knob('RATE', 200),
  rounds: knob('ROUNDS', 7),
  seconds: knob('SECONDS', 4),
  // Queue mode takes longer than synchronous mode to warm up: after a 2 s warm-up its first two rounds
  // ran about a fifth below its later ones while synchronous mode's were level, which made a 3-round
  // median mostly a measure of the warm-up. 10 s brings its first rounds in line with the rest.
  warmupSeconds: knob('WARMUP_SECONDS', 10),
  connections: knob('CONNECTIONS', 50),
  workerRounds: knob('WORKER_ROUNDS', 3),
  bullmqJobs: knob('BULLMQ_JOBS', 3_000),
  pgBossJobs: knob('PG_BOSS_JOBS', 1_500),
  concurrency: knob('CONCURRENCY', 16),
};
/**
 * Another build of `@hookline/bullmq` (a `dist/` directory, e.g. a copy with one thing edited): the
 * accepted rounds then serve queue mode from it too, interleaved with the workspace's build.
 */
const otherBullmqBuild = process.env.HOOKLINE_BENCH_QUEUE_COMPARE_BULLMQ;
const only = new Set((process.env.HOOKLINE_BENCH_QUEUE_ONLY ?? 'latency,accepted,workers').split(','));
/** Jobs the worker consuming the queue during the latency rounds runs at once: 2 s handlers at `rate`/s, with room. */
const latencyWorkerConcurrency = Math.ceil(options.rate * 2 * 1.5);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const run = randomBytes(4).toString('hex');
const prefix = `hookline-bench-queue-${run}:`;
const queues: string[] = [];
const schemas: string[] = [];
const queueName = (what: string) => {
  const name = `hookline-bench-${run}-${what}`;
  queues.push(name);
  return name;
};

function runJson<T>(script: string, args: string[], role: 'load' | 'server'): Promise<T> {
  const { command, args: argv } = pinned(role, [...nodeArgs, join(here, script), ...args]);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}') as T) : reject(new Error(`${script} exited ${code}`)),
    ),
  );
}

const startWeb = (kind: string, mode: 'sync' | 'bullmq', queue: string, handlerMs: number, build = '') =>
  startBenchServer(kind, join(here, 'server.ts'), [mode, prefix, queue, String(handlerMs), build]);

interface LatencySample {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  lateP99: number;
  non2xx: number;
  errors: number;
}

/**
 * The worker process that consumes the latency rounds' queue, as deployed: its own process (never the
 * web server's), on the load generator's core (the generator at 200/s leaves most of it idle), 2 s
 * handlers. Resolves once it is consuming; `stop()` lets its running jobs finish and ends it.
 */
async function startLatencyWorker(queue: string): Promise<{ stop(): Promise<void> }> {
  const args = [...nodeArgs, join(here, 'worker.ts'), 'bullmq', queue, prefix, '0', String(latencyWorkerConcurrency), '2000'];
  const { command, args: argv } = pinned('load', args);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  for await (const line of lines) if (line.startsWith('{')) break;
  return {
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('exit');
      await exited;
    },
  };
}

async function measureLatency(): Promise<Map<string, LatencySample[]>> {
  const latencyQueue = queueName('latency');
  const servers = [
    await startWeb('synchronous mode', 'sync', '', 2_000),
    await startWeb('queue mode (BullMQ)', 'bullmq', latencyQueue, 2_000),
  ];
  const worker = await startLatencyWorker(latencyQueue);
  const samples = new Map<string, LatencySample[]>(servers.map((server) => [server.kind, []]));
  try {
    for (let round = 0; round < options.latencyRounds; round++) {
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        const sample = await runJson<LatencySample>(
          'latency.ts',
          [String(server.port), String(options.rate), String(options.latencySeconds)],
          'load',
        );
        process.stderr.write(
          `  round ${round + 1} ${server.kind}: p50 ${sample.p50.toFixed(1)} ms, p90 ${sample.p90.toFixed(1)} ms, p99 ${sample.p99.toFixed(1)} ms, max ${sample.max.toFixed(1)} ms (generator late by ${sample.lateP99.toFixed(1)} ms at p99)\n`,
        );
        samples.get(server.kind)?.push(sample);
      }
    }
  } finally {
    await Promise.all([...servers.map(stopBenchServer), worker.stop()]);
  }
  return samples;
}

/** Redis's own CPU time so far (user + system, µs), from INFO: every client's commands, this run's and any other's. */
async function redisCpuMicros(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

interface AcceptedSample {
  rps: number;
  cpu: number;
  redisCpu: number;
  loadCpu: number;
  non2xx: number;
}

async function measureAccepted(): Promise<Map<string, AcceptedSample[]>> {
  const servers: BenchServer[] = [
    await startWeb('synchronous mode, Redis store', 'sync', '', 0),
    await startWeb('queue mode, BullMQ', 'bullmq', queueName('accepted'), 0),
    ...(otherBullmqBuild === undefined
      ? []
      : [await startWeb(`queue mode, BullMQ from ${otherBullmqBuild}`, 'bullmq', queueName('accepted-other'), 0, otherBullmqBuild)]),
  ];
  const samples = new Map<string, AcceptedSample[]>(servers.map((server) => [server.kind, []]));
  const redis = new Redis(REDIS_URL);
  try {
    for (const server of servers) await runLoad(server, { seconds: options.warmupSeconds, connections: options.connections });
    for (let round = 0; round < options.rounds; round++) {
      // Each round starts with the next server: every one takes each place in turn.
      const shift = round % servers.length;
      for (const server of [...servers.slice(shift), ...servers.slice(0, shift)]) {
        const redisBefore = await redisCpuMicros(redis);
        const sample = await runLoad(server, { seconds: options.seconds, connections: options.connections });
        const redisCpu = (await redisCpuMicros(redis)) - redisBefore;
        const answered = sample.rps * options.seconds;
        process.stderr.write(`  round ${round + 1} ${server.kind}: ${Math.round(sample.rps)} req/s\n`);
        samples.get(server.kind)?.push({
          rps: sample.rps,
          cpu: sample.cpuPerRequest,
          redisCpu: redisCpu / answered,
          loadCpu: sample.loadCpuPerRequest,
          non2xx: sample.non2xx,
        });
      }
    }
  } finally {
    redis.disconnect();
    await Promise.all(servers.map(stopBenchServer));
  }
  return samples;
}

async function fill(queue: DeliveryQueue, jobs: number): Promise<void> {
  for (let i = 0; i < jobs; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, jobs - i) }, () =>
        queue.enqueue({ delivery: createDelivery('message.inbound'), receivedAt: Date.now(), secretIndex: 0 }),
      ),
    );
  }
}

async function measureWorkers(): Promise<Map<string, number[]>> {
  const rates = new Map<string, number[]>([
    ['BullMQ', []],
    ['pg-boss', []],
  ]);
  for (let round = 0; round < options.workerRounds; round++) {
    const name = queueName(`worker-${round}`);
    const bull = bullmqQueue({ connection: { url: REDIS_URL, maxRetriesPerRequest: null }, name });
    await fill(bull, options.bullmqJobs);
    await bull.close();
    const b = await runJson<{ jobs: number; ms: number }>(
      'worker.ts',
      ['bullmq', name, prefix, String(options.bullmqJobs), String(options.concurrency)],
      'server',
    );
    rates.get('BullMQ')?.push((b.jobs / b.ms) * 1000);

    const scope = `hookline_bench_queue_${run}_${round}`;
    schemas.push(`${scope}_boss`, `${scope}_store`);
    const boss = pgBossQueue({
      connectionString: DATABASE_URL,
      name: 'bench',
      bossOptions: { schema: `${scope}_boss`, supervise: false, schedule: false, max: 10 },
    });
    await fill(boss, options.pgBossJobs);
    await boss.close();
    const p = await runJson<{ jobs: number; ms: number }>(
      'worker.ts',
      ['pg-boss', 'bench', scope, String(options.pgBossJobs), String(options.concurrency)],
      'server',
    );
    rates.get('pg-boss')?.push((p.jobs / p.ms) * 1000);
    process.stderr.write(
      `  round ${round + 1}: BullMQ ${Math.round((b.jobs / b.ms) * 1000)} jobs/s, pg-boss ${Math.round((p.jobs / p.ms) * 1000)} jobs/s\n`,
    );
  }
  return rates;
}

async function cleanup(): Promise<void> {
  const redis = new Redis(REDIS_URL);
  for (const name of queues) {
    await bullmqQueue({ connection: redis, name })
      .queue.obliterate({ force: true })
      .catch(() => {});
  }
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
  redis.disconnect();
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
  await pool.end();
}

const ms = (value: number) => (value >= 1_000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`);

function latencySection(latency: Map<string, LatencySample[]>): string[] {
  const rows = [...latency].map(([kind, samples]) => [
    kind,
    ms(median(samples.map((s) => s.p50))),
    ms(median(samples.map((s) => s.p90))),
    ms(median(samples.map((s) => s.p99))),
    ms(median(samples.map((s) => s.max))),
    String(samples.reduce((sum, s) => sum + s.non2xx + s.errors, 0)),
  ]);
  const queued = median([...latency.values()][1]?.map((s) => s.p99) ?? []);
  const late = Math.max(...[...latency.values()].flat().map((s) => s.lateP99));
  return [
    `Time to the 2xx: ${options.rate} fresh 1 KB deliveries/s for ${options.latencySeconds} s on a fixed schedule (open loop, one node:http client process), each handler taking 2 s, the Redis store in both modes; latency from each request's scheduled send time to its answer; ${options.latencyRounds} interleaved rounds, medians of the per-round percentiles. In queue mode a worker process of its own (\`receiver.work({ concurrency: ${latencyWorkerConcurrency} })\`, as deployed) consumes the queue meanwhile, on the load generator's core; the web process only enqueues. ${pinningNote()} The generator sent at most ${late.toFixed(1)} ms late (p99 of a round).`,
    '',
    markdownTable(['mode', 'p50', 'p90', 'p99', 'max', 'non-2xx + errors'], rows),
    '',
    `**Target: queue mode (BullMQ) p99 time to 2xx ≤ 10 ms → measured ${ms(queued)} (${queued <= 10 ? 'met' : 'MISSED'}).**`,
    '',
  ];
}

function acceptedSection(accepted: Map<string, AcceptedSample[]>): string[] {
  const [sync = [], queued = [], other] = [...accepted.values()];
  const rps = (samples: AcceptedSample[]) => samples.map((s) => s.rps);
  const perRound = (samples: AcceptedSample[]) => medianRoundRatio(rps(samples), rps(sync));
  const ratio = perRound(queued);
  // The machine's CPU per request (web process, Redis, load generator): with every core busy, queue
  // mode's req/s could be at most synchronous mode's times the ratio of the two.
  const machineCpu = (samples: AcceptedSample[]) => median(samples.map((s) => s.cpu + s.redisCpu + s.loadCpu));
  const ceiling = machineCpu(sync) / machineCpu(queued);
  const rows = [...accepted].map(([kind, samples]) => [
    kind,
    formatNumber(median(rps(samples))),
    `±${spreadPercent(rps(samples)).toFixed(1)}%`,
    formatNumber(median(samples.map((s) => s.cpu)), 1),
    formatNumber(median(samples.map((s) => s.redisCpu)), 1),
    formatNumber(median(samples.map((s) => s.loadCpu)), 1),
    formatNumber(machineCpu(samples), 1),
    String(samples.reduce((sum, s) => sum + s.non2xx, 0)),
    formatMeasuredRatio(perRound(samples)),
  ]);
  return [
    `Accepted deliveries/s: the node:http bridge with a no-op handler and the Redis store (ioredis), synchronous mode (claim and completion in the store) vs queue mode (one BullMQ enqueue per delivery, which is the receipt: no store call), autocannon at ${options.connections} connections, fresh deliveryIds, ${options.rounds} interleaved rounds of ${options.seconds} s after a ${options.warmupSeconds} s warm-up each; "vs synchronous" is the median of the per-round ratios; server CPU µs per request from the server process's own CPU time, Redis CPU µs per request from Redis's INFO (it counts any other client's commands too), load generator CPU µs per request from its own process (signing included). ${pinningNote()} Redis runs unpinned. The three together are what one delivery costs the machine: with every core busy and at these costs, queue mode's req/s could be at most synchronous mode's times ${formatMeasuredRatio(ceiling)} (synchronous mode's total over queue mode's), however the work were spread; a reading of this run, since the costs move with load.`,
    '',
    markdownTable(
      [
        'server',
        'req/s (median)',
        'spread',
        'server CPU µs/req',
        'Redis CPU µs/req',
        'load generator CPU µs/req',
        'all three',
        'non-2xx',
        'vs synchronous',
      ],
      rows,
    ),
    '',
    `**Target: queue mode (BullMQ) ≥ 0.80× synchronous mode's accepted deliveries/s → measured ${formatMeasuredWithCeiling(ratio, 0.8, ceiling)} (${ratio >= 0.8 ? 'met' : 'MISSED'}).**`,
    '',
    ...(other === undefined
      ? []
      : [
          `The workspace's build of @hookline/bullmq over ${otherBullmqBuild}'s, accepted deliveries/s: ${formatMeasuredRatio(medianRoundRatio(rps(queued), rps(other)))} (median of the per-round ratios; rounds ${rps(
            queued,
          )
            .map((value, round) => formatMeasuredRatio(value / (rps(other)[round] as number)))
            .join(', ')}).`,
          '',
        ]),
  ];
}

function workersSection(workers: Map<string, number[]>): string[] {
  const rows = [...workers].map(([backend, rates]) => [
    backend,
    formatNumber(median(rates)),
    `±${spreadPercent(rates).toFixed(1)}%`,
    String(backend === 'BullMQ' ? options.bullmqJobs : options.pgBossJobs),
  ]);
  return [
    `Worker throughput: the queue filled beforehand, then one worker process (\`receiver.work({ concurrency: ${options.concurrency} })\`, a no-op handler) runs every job; jobs/s from its first handler run to its last, each job's claim and completion in the store included (Redis store for BullMQ, Postgres store for pg-boss); ${options.workerRounds} rounds.`,
    '',
    markdownTable(['backend', 'jobs/s per worker process (median)', 'spread', 'jobs per round'], rows),
    '',
  ];
}

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  const source = process.execArgv.some((a) => a.includes('@hookline/source'));
  const lines = [
    '## Queue mode (answer-fast): time to 2xx, accepted deliveries/s, worker throughput',
    '',
    `Measured on ${source ? 'the sources (src/ through tsx)' : 'the built packages (dist/)'}; Redis and PostgreSQL on this machine (loopback); bullmq ${packageVersion('bullmq')}, pg-boss ${packageVersion('pg-boss')}, ioredis ${packageVersion('ioredis')}.`,
    '',
  ];
  try {
    if (only.has('latency')) {
      process.stderr.write('> time to 2xx with 2 s handlers\n');
      lines.push(...latencySection(await measureLatency()));
    }
    if (only.has('accepted')) {
      process.stderr.write('> accepted deliveries/s, no-op handler\n');
      lines.push(...acceptedSection(await measureAccepted()));
    }
    if (only.has('workers')) {
      process.stderr.write('> worker throughput, no-op handler\n');
      lines.push(...workersSection(await measureWorkers()));
    }
  } finally {
    process.stderr.write('> clean-up\n');
    await cleanup();
  }
  process.stdout.write(lines.join('\n'));
}

await main();
