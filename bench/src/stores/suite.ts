/**
 * Stores suite: what the shared stores cost a receiver. (1) HTTP throughput through the node:http
 * bridge with the memory, Redis (node-redis, ioredis) and Postgres stores, each server its own
 * process, interleaved in one run; (2) the latency of one claim + one complete (the two round trips
 * per delivery); (3) the memory store's bytes per completed record at 1,000,000 records. Prints one
 * markdown section; progress goes to stderr. Every key prefix and schema is this run's own and is
 * deleted at the end. HOOKLINE_BENCH_STORES_ONLY (e.g. `ioredis,postgres`) measures only those stores
 * beside the memory store, for a quicker comparison while working on one.
 */
import { packageVersion } from '../lib/versions';
import { wrkVersion } from '../lib/wrk';
import { measureBytesPerRecord } from './bytes-per-record';
import { openRunScope } from './run-scope';
import { latencyTable, measureStoreLatency } from './store-latency';
import { measureThroughput } from './throughput';
import { bytesSection, throughputSection } from './write-section';

const knob = (name: string, fallback: number) => Number(process.env[`HOOKLINE_BENCH_STORES_${name}`] ?? fallback);
const wrk = wrkVersion();
const throughputOptions = {
  rounds: Math.max(3, knob('ROUNDS', 5)),
  seconds: knob('SECONDS', 4),
  warmupSeconds: 2,
  connections: knob('CONNECTIONS', 50),
  pgPoolMax: knob('PG_POOL', 10),
  // HOOKLINE_BENCH_STORES_GENERATOR=autocannon compares with the generator these figures had before.
  generator: wrk === undefined || process.env.HOOKLINE_BENCH_STORES_GENERATOR === 'autocannon' ? ('autocannon' as const) : ('wrk' as const),
};
const latencyOptions = { rounds: knob('LATENCY_ROUNDS', 5), perRound: knob('LATENCY_PER_ROUND', 1_000) };
const RECORDS = knob('RECORDS', 1_000_000);
const BYTES_RUNS = 3;

async function main(): Promise<void> {
  const scope = await openRunScope();
  // Interrupted (Ctrl-C), still delete what this run wrote.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void scope.cleanup().finally(() => process.exit(130)));
  }
  let markdown: string;
  try {
    for (const note of scope.notes) process.stderr.write(`! ${note}\n`);
    process.stderr.write('> HTTP throughput per store\n');
    const throughput = await measureThroughput(scope.kinds, scope, throughputOptions);
    process.stderr.write('> claim + complete latency\n');
    const latency = await measureStoreLatency(scope.kinds, scope, latencyOptions);
    process.stderr.write(`> memory store bytes per record (${BYTES_RUNS} runs)\n`);
    const bytes = await measureBytesPerRecord(RECORDS, BYTES_RUNS);
    const source = process.execArgv.some((a) => a.includes('@hookline/source'));
    markdown = [
      '## Stores: memory, Redis and Postgres behind the node:http bridge',
      '',
      ...scope.notes.map((note) => `_${note}_\n`),
      throughputSection(throughput, {
        ...throughputOptions,
        generatorVersion: throughputOptions.generator === 'wrk' ? (wrk as string) : `autocannon ${packageVersion('autocannon')}`,
        wrkInstalled: wrk !== undefined,
        measuredOn: source ? 'the sources (src/ through tsx)' : 'the built packages (dist/)',
      }),
      '',
      `Latency in one process (no HTTP): ${latencyOptions.rounds} interleaved rounds of ${latencyOptions.perRound} deliveries per store, each a \`claim\` then a \`complete\` awaited one after the other (the two round trips a new delivery costs), then the same number with 50 deliveries in flight (a pg Pool of 50). Redis and PostgreSQL run on this machine (loopback).`,
      '',
      latencyTable(latency),
      '',
      bytesSection(bytes),
      '',
    ].join('\n');
  } finally {
    process.stderr.write('> clean-up\n');
    await scope.cleanup();
  }
  process.stdout.write(markdown);
}

await main();
