/**
 * HTTP suite: hookline's node:http bridge with the memory store vs @octokit/webhooks'
 * createNodeMiddleware, both on bare node:http, each in its own server process, loaded by autocannon
 * in a third process on loopback. Interleaved A B A B for HOOKLINE_BENCH_HTTP_ROUNDS rounds (default
 * 5, at least 3) of HOOKLINE_BENCH_HTTP_SECONDS (4) each; medians of req/s, p50, p99 and the server's CPU
 * µs per request (process.cpuUsage inside the server). Prints one markdown section.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pinned, pinningNote } from '../lib/pinning';
import { formatNumber, formatRatio, markdownTable, median, spreadPercent } from '../lib/stats';
import { packageVersion } from '../lib/versions';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Math.max(3, Number(process.env.HOOKLINE_BENCH_HTTP_ROUNDS ?? 5));
const SECONDS = Number(process.env.HOOKLINE_BENCH_HTTP_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.HOOKLINE_BENCH_HTTP_CONNECTIONS ?? 16);
// The same module resolution the runner itself uses (source condition or built dist).
const nodeArgs = ['--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--conditions'))];

interface Server {
  kind: string;
  child: ChildProcess;
  port: number;
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
  non2xx: number;
}

async function startServer(kind: string): Promise<Server> {
  const { command, args } = pinned('server', [...nodeArgs, join(here, 'server.ts'), kind]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    if (line.startsWith('{')) return { kind, child, port: (JSON.parse(line) as { port: number }).port };
  }
  throw new Error(`${kind} server exited before listening`);
}

function ask(server: Server, message: string): Promise<{ cpuMicros: number; requests: number }> {
  return new Promise((resolve) => {
    server.child.once('message', (reply) => resolve(reply as { cpuMicros: number; requests: number }));
    server.child.send(message);
  });
}

async function load(server: Server, seconds: number): Promise<Sample> {
  server.child.send('start');
  const loader = pinned('load', [
    ...nodeArgs,
    join(here, 'load.ts'),
    String(server.port),
    server.kind,
    String(seconds),
    String(CONNECTIONS),
  ]);
  const child = spawn(loader.command, loader.args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  const server_ = await ask(server, 'stop');
  const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
    requestsPerSecond: number;
    p50: number;
    p99: number;
    non2xx: number;
  };
  return {
    rps: result.requestsPerSecond,
    p50: result.p50,
    p99: result.p99,
    cpuPerRequest: server_.cpuMicros / Math.max(1, server_.requests),
    non2xx: result.non2xx,
  };
}

async function main(): Promise<void> {
  const servers = [await startServer('hookline'), await startServer('octokit')];
  const samples = new Map<string, Sample[]>(servers.map((s) => [s.kind, []]));
  try {
    for (const server of servers) await load(server, 2); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) samples.get(server.kind)?.push(await load(server, SECONDS));
    }
  } finally {
    for (const server of servers) server.child.send('exit');
  }
  const names: Record<string, string> = {
    hookline: `hookline createNodeHandler + memory store (@hookline/core ${packageVersion('@hookline/core')})`,
    octokit: `@octokit/webhooks ${packageVersion('@octokit/webhooks')} createNodeMiddleware`,
  };
  const stats = (kind: string) => {
    const list = samples.get(kind) ?? [];
    return {
      rps: median(list.map((s) => s.rps)),
      spread: spreadPercent(list.map((s) => s.rps)),
      p50: median(list.map((s) => s.p50)),
      p99: median(list.map((s) => s.p99)),
      cpu: median(list.map((s) => s.cpuPerRequest)),
      non2xx: list.reduce((sum, s) => sum + s.non2xx, 0),
    };
  };
  const octokit = stats('octokit');
  const rows = ['hookline', 'octokit'].map((kind) => {
    const s = stats(kind);
    return [
      names[kind] ?? kind,
      formatNumber(s.rps),
      `±${s.spread.toFixed(1)}%`,
      `${s.p50} ms`,
      `${s.p99} ms`,
      formatNumber(s.cpu, 1),
      String(s.non2xx),
      formatRatio(s.rps / octokit.rps),
    ];
  });
  const ratio = stats('hookline').rps / octokit.rps;
  process.stdout.write(
    [
      '## HTTP: node:http bridge vs @octokit/webhooks createNodeMiddleware',
      '',
      `Each server is its own process on bare node:http (127.0.0.1), one no-op handler; autocannon (${packageVersion('autocannon')}) runs in a third process with ${CONNECTIONS} connections and sends 1 KB deliveries, each with a fresh deliveryId and signature (so every hookline request is a real claim and completion). ${ROUNDS} interleaved rounds of ${SECONDS} s after a 2 s warm-up each; medians across rounds. CPU is the server process's user + system time (process.cpuUsage) divided by the requests it served in the round. ${pinningNote()}`,
      '',
      markdownTable(['server', 'req/s (median)', 'spread', 'p50', 'p99', 'server CPU µs / request', 'non-2xx', 'vs octokit'], rows),
      '',
      `**Target: node:http bridge + memory store ≥ 1.25× octokit createNodeMiddleware throughput → measured ${formatRatio(ratio)} (${ratio >= 1.25 ? 'met' : 'MISSED'}).**`,
      '',
    ].join('\n'),
  );
}

await main();
