/**
 * HTTP suite: each adapter against a hand-written handler doing the same work on the same framework
 * (raw body, HMAC-SHA256, timingSafeEqual, JSON.parse; see server.ts). Every server is its own
 * process on 127.0.0.1; autocannon runs in another (../lib/load.ts: 1 KB deliveries, a fresh
 * deliveryId and signature per request). Per framework the two run interleaved, A B then B A, for
 * HOOKLINE_BENCH_HTTP_ROUNDS rounds (default 5, at least 3) of HOOKLINE_BENCH_HTTP_SECONDS (4) each,
 * after a 2 s warm-up. The ratio is the median of the per-round ratios. Prints one markdown section.
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
const ONLY = (process.env.HOOKLINE_BENCH_HTTP_ONLY ?? '').split(',').filter(Boolean);

const FRAMEWORKS = [
  { name: 'express', label: `Express ${packageVersion('express')}`, adapter: '@hookline/express webhookHandler', target: 0.95 },
  { name: 'hono', label: `Hono ${packageVersion('hono')} on @hono/node-server`, adapter: '@hookline/hono webhookHandler', target: 0.95 },
  { name: 'node', label: 'node:http', adapter: '@hookline/core createNodeHandler', target: 0.9 },
  { name: 'fastify', label: `Fastify ${packageVersion('fastify')}`, adapter: '@hookline/fastify webhookPlugin', target: undefined },
  { name: 'koa', label: `Koa ${packageVersion('koa')}`, adapter: '@hookline/koa webhookMiddleware', target: 0.95 },
  { name: 'h3', label: `h3 ${packageVersion('h3')} (node:http)`, adapter: '@hookline/h3 webhookHandler', target: 0.95 },
  { name: 'h3v1', label: `h3 ${packageVersion('h3-v1')} (node:http)`, adapter: '@hookline/h3 webhookHandler', target: 0.95 },
  {
    name: 'nestjs',
    label: `NestJS ${packageVersion('@nestjs/core')} on platform-express`,
    adapter: '@hookline/nestjs HooklineModule',
    target: 0.95,
  },
  {
    name: 'nestfastify',
    label: `NestJS ${packageVersion('@nestjs/core')} on platform-fastify`,
    adapter: '@hookline/nestjs HooklineModule',
    target: 0.95,
  },
].filter((f) => ONLY.length === 0 || ONLY.includes(f.name));

type Server = BenchServer;
type Sample = LoadSample;

const startServer = (kind: string): Promise<Server> => startBenchServer(kind, join(here, 'server.ts'), [kind]);
const load = (server: Server, seconds: number): Promise<Sample> => runLoad(server, { seconds, connections: CONNECTIONS });

const VARIANTS = ['baseline', 'hookline', 'dedupe'] as const;
type Variant = (typeof VARIANTS)[number];

function summarise(list: Sample[]) {
  return {
    rps: median(list.map((s) => s.rps)),
    spread: spreadPercent(list.map((s) => s.rps)),
    p99: median(list.map((s) => s.p99)),
    cpu: median(list.map((s) => s.cpuPerRequest)),
    non2xx: list.reduce((sum, s) => sum + s.non2xx, 0),
  };
}

async function main(): Promise<void> {
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const framework of FRAMEWORKS) {
    process.stderr.write(`> http: ${framework.name}\n`);
    const servers = {} as Record<Variant, Server>;
    for (const variant of VARIANTS) servers[variant] = await startServer(`${framework.name}-${variant}`);
    const samples = { baseline: [], hookline: [], dedupe: [] } as Record<Variant, Sample[]>;
    const ratios = { hookline: [] as number[], dedupe: [] as number[] };
    try {
      for (const variant of VARIANTS) await load(servers[variant], 2); // warm-up (JIT, connection pools)
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
        const got = {} as Record<Variant, Sample>;
        for (const variant of order) got[variant] = await load(servers[variant], SECONDS);
        for (const variant of VARIANTS) samples[variant].push(got[variant]);
        ratios.hookline.push(got.hookline.rps / got.baseline.rps);
        ratios.dedupe.push(got.dedupe.rps / got.baseline.rps);
        process.stderr.write(
          `  round ${round + 1}: hookline ${formatRatio(ratios.hookline.at(-1)!)}, with dedupe ${formatRatio(ratios.dedupe.at(-1)!)}\n`,
        );
      }
    } finally {
      await Promise.all(VARIANTS.map((variant) => stopBenchServer(servers[variant])));
    }
    const cell = (variant: Variant, ratio?: number) => {
      const s = summarise(samples[variant]);
      return [
        `${formatNumber(s.rps)} ±${s.spread.toFixed(1)}%`,
        ratio === undefined ? '1.00×' : formatRatio(ratio),
        `${s.p99} ms`,
        formatNumber(s.cpu, 1),
        String(s.non2xx),
      ];
    };
    const ratio = median(ratios.hookline);
    // The steadier view on a shared machine: the hand-written handler's CPU per request over the adapter's.
    const cpuRatio = summarise(samples.baseline).cpu / summarise(samples.hookline).cpu;
    const target = framework.target;
    const verdict = target === undefined ? '—' : `≥ ${formatRatio(target)}: ${ratio >= target ? 'met' : 'MISSED'}`;
    rows.push([framework.label, 'hand-written', ...cell('baseline'), '']);
    rows.push(['', framework.adapter, ...cell('hookline', ratio), verdict]);
    rows.push([
      '',
      `${framework.adapter} + memory-store dedupe + handler`,
      ...cell('dedupe', median(ratios.dedupe)),
      '(more work than the baseline)',
    ]);
    if (target !== undefined) {
      verdicts.push(
        `**Target: ${framework.adapter} ≥ ${formatRatio(target)} hand-written ${framework.label} → measured ${formatMeasuredRatio(ratio)} (${ratio >= target ? 'met' : 'MISSED'}); by server CPU per request ${formatMeasuredRatio(cpuRatio)}.**`,
      );
    }
  }
  process.stdout.write(
    [
      '## HTTP: adapters vs hand-written handlers on the same framework',
      '',
      `Each server is its own process on 127.0.0.1. The hand-written handler reads the raw body, checks HMAC-SHA256 with node:crypto and timingSafeEqual, JSON.parses and answers 200. The adapter row does that same work through hookline (verification, envelope and freshness checks; no handler registered, so no store round trip); the dedupe row adds what the hand-written handler does not do at all: a memory-store claim and completion and a no-op handler per delivery. autocannon (${packageVersion('autocannon')}) runs in another process with ${CONNECTIONS} connections, 1 KB deliveries, a fresh deliveryId and signature per request. Per framework: a 2 s warm-up each, then ${ROUNDS} interleaved rounds (A B C, C B A, …) of ${SECONDS} s; req/s are medians across rounds (± half the IQR), ratios are medians of the per-round ratios to the hand-written handler. CPU is the server's user + system µs per request (process.cpuUsage). ${pinningNote()}`,
      '',
      markdownTable(['framework', 'handler', 'req/s (median)', 'vs hand-written', 'p99', 'server CPU µs/req', 'non-2xx', 'target'], rows),
      '',
      ...verdicts.flatMap((line) => [line, '']),
    ].join('\n'),
  );
}

await main();
