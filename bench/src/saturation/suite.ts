/**
 * Saturation suite: each server at 100% of its core, loaded by wrk (a C load generator from the OS
 * packages) that outruns it. autocannon runs in Node and saturates before a fast server does, which
 * hides the server's own cost; wrk does not, and the suite checks it: the server's CPU over the round
 * must be close to its whole core, or the row says the generator was the limit.
 *
 * wrk repeats one signed 1 KB delivery on 50 connections, so after the first request every server
 * answers "duplicate": the work per request is verify, parse, look up, answer. The servers (server.ts)
 * are a hand-written node:http receiver, hookline's node:http bridge, and receiver.handle behind a
 * hand-written reader and writer. Interleaved rounds, the order rotating; the ratio is the median of
 * the per-round ratios to the hand-written receiver.
 *
 * HOOKLINE_SATURATION_ROUNDS (default 5) and HOOKLINE_SATURATION_SECONDS (default 4) trade time for precision.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchServer, startBenchServer, stopBenchServer, stopCounting } from '../lib/bench-process';
import { signedPool } from '../lib/payloads';
import { pinningNote } from '../lib/pinning';
import { formatMeasuredRatio, formatNumber, markdownTable, median } from '../lib/stats';
import { luaString, runWrk, wrkVersion } from '../lib/wrk';

const ROUNDS = Number(process.env.HOOKLINE_SATURATION_ROUNDS ?? 5);
const SECONDS = Number(process.env.HOOKLINE_SATURATION_SECONDS ?? 4);
const CONNECTIONS = 50;
const KINDS = ['hand-written', 'bridge', 'handle'] as const;
type Kind = (typeof KINDS)[number];
const LABELS: Record<Kind, string> = {
  'hand-written': 'hand-written node:http receiver (HMAC, timingSafeEqual, JSON.parse, Map)',
  bridge: 'hookline createNodeHandler + memory store',
  handle: 'hookline receiver.handle behind a hand-written reader/writer',
};
const here = dirname(fileURLToPath(import.meta.url));

const wrk = wrkVersion();
if (wrk === undefined) {
  process.stdout.write('## HTTP at saturation (wrk)\n\nNot run: `wrk` is not installed (`apt-get install wrk`).\n');
  process.exit(0);
}

/** wrk's Lua script: POST one signed delivery. */
function luaScript(dir: string): string {
  const [delivery] = signedPool('message.inbound', 1024, 1);
  if (delivery === undefined) throw new Error('no delivery');
  const script = [
    'wrk.method = "POST"',
    `wrk.body = ${luaString(delivery.text)}`,
    'wrk.headers["content-type"] = "application/json"',
    `wrk.headers["x-service-signature"] = ${luaString(delivery.hex)}`,
    'wrk.headers["x-service-event"] = "message.inbound"',
    `wrk.headers["x-service-delivery-id"] = ${luaString(delivery.deliveryId)}`,
  ].join('\n');
  const path = join(dir, 'post.lua');
  writeFileSync(path, script);
  return path;
}

/** One wrk round: its req/s, and the server's CPU µs per request and share of its core. */
async function round(server: BenchServer, script: string): Promise<{ rps: number; cpuPerRequest: number; coreShare: number }> {
  server.child.send('start');
  const result = await runWrk({ url: `http://127.0.0.1:${server.port}/webhooks`, script, seconds: SECONDS, connections: CONNECTIONS });
  const used = await stopCounting(server);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`wrk saw non-2xx answers or socket errors:\n${result.output}`);
  return {
    rps: result.requestsPerSecond,
    cpuPerRequest: used.cpuMicros / Math.max(1, used.requests),
    coreShare: used.cpuMicros / (SECONDS * 1e6),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hookline-saturation-'));
  const script = luaScript(dir);
  const servers = new Map<Kind, BenchServer<Kind>>();
  for (const kind of KINDS) servers.set(kind, await startBenchServer(kind, join(here, 'server.ts'), [kind]));
  const samples = new Map<Kind, { rps: number; cpu: number; share: number; ratio: number }[]>(KINDS.map((k) => [k, []]));
  try {
    for (const kind of KINDS) await round(servers.get(kind) as BenchServer, script); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      const results = new Map<Kind, Awaited<ReturnType<typeof round>>>();
      for (let i = 0; i < KINDS.length; i++) {
        const kind = KINDS[(i + r) % KINDS.length] as Kind;
        results.set(kind, await round(servers.get(kind) as BenchServer, script));
        process.stderr.write(`saturation round ${r + 1}/${ROUNDS} ${kind}: ${results.get(kind)?.rps.toFixed(0)} req/s\n`);
      }
      const base = results.get('hand-written')?.rps ?? Number.NaN;
      for (const kind of KINDS) {
        const result = results.get(kind) as Awaited<ReturnType<typeof round>>;
        samples.get(kind)?.push({ rps: result.rps, cpu: result.cpuPerRequest, share: result.coreShare, ratio: result.rps / base });
      }
    }
  } finally {
    for (const server of servers.values()) await stopBenchServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = KINDS.map((kind) => {
    const values = samples.get(kind) ?? [];
    const share = median(values.map((v) => v.share));
    return [
      LABELS[kind],
      formatNumber(median(values.map((v) => v.rps))),
      formatNumber(median(values.map((v) => v.cpu)), 1),
      `${(share * 100).toFixed(0)}%${share < 0.9 ? ' (not saturated: the generator was the limit)' : ''}`,
      formatMeasuredRatio(median(values.map((v) => v.ratio))),
    ];
  });
  const bridge = median((samples.get('bridge') ?? []).map((v) => v.ratio));
  process.stdout.write(
    [
      '## HTTP at saturation (wrk)',
      '',
      `wrk (${wrk}) with 1 thread and ${CONNECTIONS} connections repeats one signed 1 KB delivery for ${SECONDS} s per round, so every server answers "duplicate" after the first: verify, parse, look up, answer. ${ROUNDS} interleaved rounds after a warm-up round each; req/s and CPU µs per request (the server's user + system time) are medians; "of its core" is the server's CPU time over the round's wall time, which must be near 100% for the round to measure the server rather than the generator. ${pinningNote()}`,
      '',
      markdownTable(['server', 'req/s', 'CPU µs / request', 'of its core', 'vs hand-written'], rows),
      '',
      `Target: hookline's bridge ≥ 0.90× the hand-written receiver at saturation: ${formatMeasuredRatio(bridge)} ${bridge >= 0.9 ? 'met' : 'MISSED'}.`,
      '',
    ].join('\n'),
  );
}

await main();
