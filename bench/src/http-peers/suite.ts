/**
 * HTTP suite: hookline's node:http bridge with the memory store vs @octokit/webhooks'
 * createNodeMiddleware, both on bare node:http, each in its own server process, loaded by autocannon
 * in a third process on loopback. Interleaved A B A B for HOOKLINE_BENCH_HTTP_ROUNDS rounds (default
 * 5, at least 3) of HOOKLINE_BENCH_HTTP_SECONDS (4) each; medians of req/s, p50, p99 and the server's CPU
 * µs per request (process.cpuUsage inside the server). Prints one markdown section.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchServer, type LoadSample, runLoad, startBenchServer, stopBenchServer } from '../lib/bench-process';
import { pinningNote } from '../lib/pinning';
import { formatMeasuredRatio, formatNumber, formatRatio, markdownTable, median, spreadPercent } from '../lib/stats';
import { packageVersion } from '../lib/versions';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Math.max(3, Number(process.env.HOOKLINE_BENCH_HTTP_ROUNDS ?? 5));
const SECONDS = Number(process.env.HOOKLINE_BENCH_HTTP_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.HOOKLINE_BENCH_HTTP_CONNECTIONS ?? 16);

type Server = BenchServer<'hookline' | 'octokit'>;
type Sample = LoadSample;

const startServer = (kind: 'hookline' | 'octokit'): Promise<Server> => startBenchServer(kind, join(here, 'server.ts'), [kind]);
const load = (server: Server, seconds: number): Promise<Sample> =>
  runLoad(server, { seconds, connections: CONNECTIONS, signer: server.kind });

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
    await Promise.all(servers.map(stopBenchServer));
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
      `**Target: node:http bridge + memory store ≥ 1.25× octokit createNodeMiddleware throughput → measured ${formatMeasuredRatio(ratio)} (${ratio >= 1.25 ? 'met' : 'MISSED'}).**`,
      '',
    ].join('\n'),
  );
}

await main();
