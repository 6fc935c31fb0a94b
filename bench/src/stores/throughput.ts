/**
 * HTTP throughput per store: one server process per store (server.ts), all started up front, each
 * loaded in turn by autocannon in a process of its own (load.ts). Rounds are interleaved and the
 * order reverses every round (A B C, C B A, A B C…), so drift on the machine hits every store alike.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pinned } from '../lib/pinning';
import type { RunLocation, StoreKind } from './open-store';

const here = dirname(fileURLToPath(import.meta.url));
// The same module resolution the suite itself uses (the source condition, or the built dist/).
const nodeArgs = ['--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--conditions'))];

export interface ThroughputOptions {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  pgPoolMax: number;
}

/** One store's figures in one round. */
export interface ThroughputSample {
  rps: number;
  p50: number;
  p99: number;
  /** The server process's user + system CPU µs per request it answered. */
  cpuPerRequest: number;
  non2xx: number;
  errors: number;
}

interface Server {
  kind: StoreKind;
  child: ChildProcess;
  port: number;
}

async function startServer(kind: StoreKind, where: RunLocation, pgPoolMax: number): Promise<Server> {
  // Pinned like the other HTTP suites: the server on the last core, the load generator on the first.
  const { command, args } = pinned('server', [...nodeArgs, join(here, 'server.ts'), kind, where.prefix, where.schema, String(pgPoolMax)]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('{')) return { kind, child, port: (JSON.parse(line) as { port: number }).port };
  }
  throw new Error(`the ${kind} server exited before listening`);
}

function ask(server: Server, message: string): Promise<{ cpuMicros: number; requests: number }> {
  return new Promise((resolve) => {
    server.child.once('message', (reply) => resolve(reply as { cpuMicros: number; requests: number }));
    server.child.send(message);
  });
}

async function load(server: Server, seconds: number, connections: number): Promise<ThroughputSample> {
  server.child.send('start');
  const loader = pinned('load', [...nodeArgs, join(here, 'load.ts'), String(server.port), String(seconds), String(connections)]);
  const child = spawn(loader.command, loader.args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const used = await ask(server, 'stop');
  const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
    requestsPerSecond: number;
    p50: number;
    p99: number;
    non2xx: number;
    errors: number;
  };
  return {
    rps: result.requestsPerSecond,
    p50: result.p50,
    p99: result.p99,
    cpuPerRequest: used.cpuMicros / Math.max(1, used.requests),
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.send('exit');
  await exited;
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
      await load(server, options.warmupSeconds, options.connections);
    }
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        const sample = await load(server, options.seconds, options.connections);
        process.stderr.write(`  round ${round + 1} ${server.kind}: ${Math.round(sample.rps)} req/s\n`);
        samples.get(server.kind)!.push(sample);
      }
    }
  } finally {
    await Promise.all(servers.map(stopServer));
  }
  return samples;
}
