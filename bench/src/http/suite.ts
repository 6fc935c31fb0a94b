/**
 * HTTP suite: each adapter against a hand-written handler doing the same work on the same framework
 * (raw body, HMAC-SHA256, timingSafeEqual, JSON.parse; see server.ts). Every server is its own
 * process on 127.0.0.1; autocannon runs in another (../http-peers/load.ts: 1 KB deliveries, a fresh
 * deliveryId and signature per request). Per framework the two run interleaved, A B then B A, for
 * HOOKLINE_BENCH_HTTP_ROUNDS rounds (default 5, at least 3) of HOOKLINE_BENCH_HTTP_SECONDS (4) each,
 * after a 2 s warm-up. The ratio is the median of the per-round ratios. Prints one markdown section.
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
const ONLY = (process.env.HOOKLINE_BENCH_HTTP_ONLY ?? '').split(',').filter(Boolean);
const nodeArgs = ['--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--conditions'))];

const FRAMEWORKS = [
  { name: 'express', label: `Express ${packageVersion('express')}`, adapter: '@hookline/express webhookHandler', target: 0.95 },
  { name: 'hono', label: `Hono ${packageVersion('hono')} on @hono/node-server`, adapter: '@hookline/hono webhookHandler', target: 0.95 },
  { name: 'node', label: 'node:http', adapter: '@hookline/core createNodeHandler', target: 0.9 },
  { name: 'fastify', label: `Fastify ${packageVersion('fastify')}`, adapter: '@hookline/fastify hooklinePlugin', target: undefined },
].filter((f) => ONLY.length === 0 || ONLY.includes(f.name));

interface Server {
  kind: string;
  child: ChildProcess;
  port: number;
}

interface Sample {
  rps: number;
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
    join(here, '../http-peers/load.ts'),
    String(server.port),
    'hookline',
    String(seconds),
    String(CONNECTIONS),
  ]);
  const child = spawn(loader.command, loader.args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  const used = await ask(server, 'stop');
  const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { requestsPerSecond: number; p99: number; non2xx: number };
  return {
    rps: result.requestsPerSecond,
    p99: result.p99,
    cpuPerRequest: used.cpuMicros / Math.max(1, used.requests),
    non2xx: result.non2xx,
  };
}

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
      for (const variant of VARIANTS) servers[variant].child.send('exit');
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
        `**Target: ${framework.adapter} ≥ ${formatRatio(target)} hand-written ${framework.label} → measured ${formatRatio(ratio)} (${ratio >= target ? 'met' : 'MISSED'}).**`,
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
