/**
 * HTTP throughput per store: one server process per store (server.ts), all started up front, each
 * loaded in turn by wrk with deliveries signed before the round (../lib/wrk-load.ts), or by
 * autocannon (../lib/load.ts) where wrk is not installed. Rounds are interleaved and the
 * order reverses every round (A B C, C B A, A B C…), so drift on the machine hits every store alike.
 * Under wrk each store's turn also has an autocannon round, for the receiver's CPU per request with a
 * generator seldom asleep when answers come (see `ThroughputSample.steadyCpuPerRequest`).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchServer, type LoadSample, runLoad, startBenchServer, stopBenchServer } from '../lib/bench-process';
import { serverCpuMicros } from '../lib/server-cpu';
import { type RunLocation, type StoreKind, serverOf } from './open-store';

const here = dirname(fileURLToPath(import.meta.url));

export interface ThroughputOptions {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  pgPoolMax: number;
  /**
   * wrk, where installed: autocannon signs each request in Node, which cost about as much CPU per
   * request as the receiver, on the core the database servers share with it.
   */
  generator: 'wrk' | 'autocannon';
}

/** One store's figures in one round. */
export interface ThroughputSample extends LoadSample {
  /**
   * The database server's CPU µs per request (all its processes); 0 for the stores that run inside the
   * receiver (memory, SQLite), undefined when the server is not on this machine.
   */
  databaseCpuPerRequest: number | undefined;
  /**
   * The receiver's CPU µs per request in a round of the same length under autocannon, which signs each
   * request itself and so is busy, seldom asleep, when an answer comes: few answers have to wake it. Under wrk, which is
   * faster than these receivers, a receiver pays in its system time for every answer that finds wrk
   * asleep: the memory store's receiver, which answers each delivery as it reads it, on most answers,
   * batching stores (SQLite, one transaction per event-loop turn) on few. The same as `cpuPerRequest`
   * when the rounds are autocannon's already.
   */
  steadyCpuPerRequest: number;
}

type Server = BenchServer<StoreKind>;

const startServer = (kind: StoreKind, where: RunLocation, pgPoolMax: number): Promise<Server> =>
  startBenchServer(kind, join(here, 'server.ts'), [kind, where.prefix, where.schema, String(pgPoolMax)]);
async function load(server: Server, seconds: number, options: ThroughputOptions): Promise<ThroughputSample> {
  const database = serverOf(server.kind);
  const before = database === undefined ? 0 : serverCpuMicros(database);
  const sample = await runLoad(server, { seconds, connections: options.connections, generator: options.generator });
  const after = database === undefined ? 0 : serverCpuMicros(database);
  const answered = sample.rps * seconds;
  const databaseCpuPerRequest = before === undefined || after === undefined || answered <= 0 ? undefined : (after - before) / answered;
  const steady =
    options.generator === 'autocannon'
      ? sample
      : await runLoad(server, { seconds, connections: options.connections, generator: 'autocannon' });
  return { ...sample, databaseCpuPerRequest, steadyCpuPerRequest: steady.cpuPerRequest };
}

/** Every store's samples, one per round, in `kinds` order. */
export async function measureThroughput(
  kinds: readonly StoreKind[],
  where: RunLocation,
  options: ThroughputOptions,
): Promise<Map<StoreKind, ThroughputSample[]>> {
  const servers: Server[] = [];
  const samples = new Map<StoreKind, ThroughputSample[]>(kinds.map((kind) => [kind, []]));
  try {
    for (const kind of kinds) servers.push(await startServer(kind, where, options.pgPoolMax));
    for (const server of servers) {
      process.stderr.write(`  warm-up ${server.kind}\n`);
      await load(server, options.warmupSeconds, options);
    }
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        const sample = await load(server, options.seconds, options);
        process.stderr.write(
          `  round ${round + 1} ${server.kind}: ${Math.round(sample.rps)} req/s, receiver ${sample.cpuPerRequest.toFixed(1)} µs/req (${sample.steadyCpuPerRequest.toFixed(1)} under autocannon)\n`,
        );
        samples.get(server.kind)!.push(sample);
      }
    }
  } finally {
    await Promise.all(servers.map(stopBenchServer));
  }
  return samples;
}
