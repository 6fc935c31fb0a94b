/**
 * Saturation suite: each server at 100% of its core, loaded by wrk (a C load generator from the OS
 * packages) that outruns it. autocannon runs in Node and saturates before a fast server does, which
 * hides the server's own cost; wrk does not, and the suite checks it: the server's CPU over the round
 * must be close to its whole core, or the row says the generator was the limit.
 *
 * wrk repeats one signed 1 KB delivery on 50 connections, so after the first request every server
 * answers "duplicate": the work per request is verify, parse, look up, answer. The servers (server.ts)
 * are two hand-written node:http receivers (the bare one the target is set against, and one that
 * also makes every check the service's contract asks for), hookline's node:http bridge, and
 * receiver.handle behind a hand-written reader and writer. Interleaved rounds, the order rotating;
 * the ratio is the median of the per-round ratios to the bare hand-written receiver.
 *
 * Every round starts each server afresh (and warms it up): two processes of the same server differ by
 * up to ±10% in what V8's optimiser makes of them, where rounds against one process agree within 2%,
 * so a suite that kept one process per server for all its rounds reported that one process's luck.
 *
 * HOOKLINE_SATURATION_ROUNDS (default 9), HOOKLINE_SATURATION_SECONDS (default 3) and
 * HOOKLINE_SATURATION_WARMUP_SECONDS (default 2) trade time for precision.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchServer, startBenchServer, stopBenchServer, stopCounting } from '../lib/bench-process';
import { signedPool } from '../lib/payloads';
import { pinningNote } from '../lib/pinning';
import { formatMeasuredRatio, formatNumber, formatRatio, markdownTable, median, medianRoundRatio, roundRatios } from '../lib/stats';
import { luaString, runWrk, wrkVersion } from '../lib/wrk';

const ROUNDS = Number(process.env.HOOKLINE_SATURATION_ROUNDS ?? 9);
const SECONDS = Number(process.env.HOOKLINE_SATURATION_SECONDS ?? 3);
const WARMUP_SECONDS = Number(process.env.HOOKLINE_SATURATION_WARMUP_SECONDS ?? 2);
const CONNECTIONS = 50;
const KINDS = ['hand-written', 'contract', 'bridge', 'handle'] as const;
type Kind = (typeof KINDS)[number];
const LABELS: Record<Kind, string> = {
  'hand-written': 'hand-written node:http receiver (HMAC, timingSafeEqual, JSON.parse, Map)',
  contract: 'hand-written node:http receiver that also checks the envelope, its age and the two unsigned headers',
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

/** What one wrk run measured of one server. */
interface Sample {
  rps: number;
  /** The server's CPU µs (user + system) per request. */
  cpuPerRequest: number;
  /** The server's CPU time over the run's wall time: near 1 when the server, not wrk, was the limit. */
  coreShare: number;
}

/** Loads `server` with wrk for `seconds`. */
async function load(server: BenchServer, script: string, seconds: number): Promise<Sample> {
  server.child.send('start');
  const result = await runWrk({ url: `http://127.0.0.1:${server.port}/webhooks`, script, seconds, connections: CONNECTIONS });
  const used = await stopCounting(server);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`wrk saw non-2xx answers or socket errors:\n${result.output}`);
  return {
    rps: result.requestsPerSecond,
    cpuPerRequest: used.cpuMicros / Math.max(1, used.requests),
    coreShare: used.cpuMicros / (seconds * 1e6),
  };
}

/** One round of one server: a process of its own, warmed up, then measured, then stopped. */
async function round(kind: Kind, script: string): Promise<Sample> {
  const server = await startBenchServer(kind, join(here, 'server.ts'), [kind]);
  try {
    await load(server, script, WARMUP_SECONDS);
    return await load(server, script, SECONDS);
  } finally {
    await stopBenchServer(server);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hookline-saturation-'));
  const script = luaScript(dir);
  // Each server's samples, one per round, in round order (so that the rounds' ratios pair up).
  const samples = new Map<Kind, Sample[]>(KINDS.map((k) => [k, []]));
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < KINDS.length; i++) {
        const kind = KINDS[(i + r) % KINDS.length] as Kind;
        const sample = await round(kind, script);
        samples.get(kind)?.push(sample);
        process.stderr.write(`saturation round ${r + 1}/${ROUNDS} ${kind}: ${sample.rps.toFixed(0)} req/s\n`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rps = (kind: Kind) => (samples.get(kind) ?? []).map((v) => v.rps);
  const ratios = (kind: Kind) => roundRatios(rps(kind), rps('hand-written'));
  const rows = KINDS.map((kind) => {
    const values = samples.get(kind) ?? [];
    const share = median(values.map((v) => v.coreShare));
    return [
      LABELS[kind],
      formatNumber(median(values.map((v) => v.rps))),
      formatNumber(median(values.map((v) => v.cpuPerRequest)), 1),
      `${(share * 100).toFixed(0)}%${share < 0.9 ? ' (not saturated: the generator was the limit)' : ''}`,
      formatMeasuredRatio(median(ratios(kind))),
      kind === 'hand-written' ? '' : `${formatRatio(Math.min(...ratios(kind)))}–${formatRatio(Math.max(...ratios(kind)))}`,
    ];
  });
  const bridge = median(ratios('bridge'));
  const againstContract = medianRoundRatio(rps('bridge'), rps('contract'));
  process.stdout.write(
    [
      '## HTTP at saturation (wrk)',
      '',
      `wrk (${wrk}) with 1 thread and ${CONNECTIONS} connections repeats one signed 1 KB delivery for ${SECONDS} s per round, so every server answers "duplicate" after the first: verify, parse, look up, answer. ${ROUNDS} interleaved rounds, each starting every server in a process of its own and warming it up for ${WARMUP_SECONDS} s (two processes of one server can differ by up to ±10%, rounds against one process by about 2%); req/s and CPU µs per request (the server's user + system time) are medians; "of its core" is the server's CPU time over the round's wall time, which must be near 100% for the round to measure the server rather than the generator. ${pinningNote()}`,
      '',
      markdownTable(['server', 'req/s', 'CPU µs / request', 'of its core', 'vs hand-written', 'rounds from–to'], rows),
      '',
      `The bridge against the hand-written receiver that makes the same checks: ${formatMeasuredRatio(againstContract)} (median of the rounds' ratios).`,
      '',
      `Target: hookline's bridge ≥ 0.90× the hand-written receiver at saturation: ${formatMeasuredRatio(bridge)} ${bridge >= 0.9 ? 'met' : 'MISSED'}.`,
      '',
    ].join('\n'),
  );
}

await main();
