/**
 * Instructions per request of one benchmark server, counted by valgrind's callgrind: what the
 * `instructions.ts` scripts of the saturation and HTTP suites share. Not a suite.
 *
 * Why: a change worth 1–2% of a request cannot be seen in wrk or autocannon rounds, which move by
 * several percent on a small virtual machine; an instruction count of the same code on the same
 * requests does not depend on what else the machine runs (see NODE_FLAGS for its spread). It measures instructions only: a change that allocates less,
 * or touches less memory, may gain more time than instructions, so confirm a real gain with a suite.
 *
 * The server runs under callgrind (some 50 times slower) on the built packages (`pnpm build` first,
 * as for the suites), gets WARMUP requests so that V8 has optimised its hot code, then `samples`
 * batches of `perSample` requests, the counters zeroed before each and dumped after it
 * (callgrind_control). Callgrind counts every thread, V8's background compiler and garbage collector
 * included: the first batch after the warm-up still counted about 60% more than the later ones, so
 * one batch more goes first, uncounted. Every request is the same signed 1 KB delivery. The node
 * binary has no symbols, so callgrind's per-function figures say little; the totals are what this reads.
 * Work driven by a clock (interval timers) falls on fewer requests per tick under callgrind, the more
 * so the busier the machine: compare servers counted in one run, and mistrust a slow server's count.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchServer, stopBenchServer } from './bench-process';
import { signedPool } from './payloads';
import { formatNumber, markdownTable, median } from './stats';

const WARMUP = 9_000;
/**
 * V8 compiles and collects garbage on the main thread, so that how much of its background work a
 * sample happens to catch moves the count less: three samples of the contract server spread over 12%
 * (185,600–208,800) with the background threads, over 5% (186,900–196,600) without, on a loaded
 * 2-core VM (2026-11). The first sample still runs highest: read medians of five.
 */
const NODE_FLAGS = ['--single-threaded'];
const IN_FLIGHT = 8;

/** A signed delivery, sent as is by every request. */
export interface Delivery {
  text: string;
  hex: string;
  deliveryId: string;
}

/** The 1 KB delivery both scripts send. */
export function oneDelivery(): Delivery {
  const [delivery] = signedPool('message.inbound', 1024, 1);
  if (delivery === undefined) throw new Error('no delivery');
  return delivery;
}

/** Exits with advice when valgrind is not installed. */
export function requireValgrind(script: string): void {
  if (spawnSync('valgrind', ['--version']).error !== undefined) {
    process.stderr.write(`${script} needs valgrind: apt-get install valgrind\n`);
    process.exit(1);
  }
}

/** Sends `count` POSTs of the delivery, IN_FLIGHT at a time on kept-alive connections; every answer must be 200. */
function send(port: number, delivery: Delivery, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(delivery.text)),
    'x-service-signature': delivery.hex,
    'x-service-event': 'message.inbound',
    'x-service-delivery-id': delivery.deliveryId,
  };
  let started = 0;
  let answered = 0;
  return new Promise<void>((resolve, reject) => {
    const next = (): void => {
      if (started >= count) return;
      started++;
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/webhooks', agent, headers, timeout: 60_000 }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`answer ${res.statusCode}`));
          if (++answered === count) resolve();
          else next();
        });
      });
      req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
      req.on('error', reject);
      req.end(delivery.text);
    };
    for (let i = 0; i < IN_FLIGHT; i++) next();
  }).finally(() => agent.destroy());
}

/** The instruction total of the newest callgrind dump in `dir` beyond the `known` ones. */
async function nextDump(dir: string, known: number): Promise<number> {
  for (let waited = 0; waited < 30_000; waited += 200) {
    const dumps = readdirSync(dir).filter((name) => /^out\.\d+\.\d+$/.test(name));
    if (dumps.length > known) {
      const newest = dumps.sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2])).at(-1) as string;
      const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, newest), 'utf8'));
      if (summary !== null) return Number(summary[1]);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('callgrind wrote no dump within 30 s');
}

/** How many samples of how many requests each. */
export interface CountOptions {
  samples: number;
  perSample: number;
}

/** Instructions per request of the server `script kind`, one figure per sample. */
export async function countInstructions(kind: string, script: string, delivery: Delivery, options: CountOptions): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), `hookline-instructions-${kind}-`));
  const wrapper = [
    'valgrind',
    '--quiet',
    '--tool=callgrind',
    '--smc-check=all-non-file', // V8 writes and rewrites machine code at run time
    `--callgrind-out-file=${join(dir, 'out.%p')}`,
    // Through a shell that adds node's flags (the node command line is the wrapper's last word).
    '--trace-children=yes',
    '--trace-children-skip=*esbuild*', // tsx's compiler, a Go binary callgrind cannot run
    'sh',
    '-c',
    `node=$1; shift; exec "$node" ${NODE_FLAGS.join(' ')} "$@"`,
    'sh',
  ];
  const server = await startBenchServer(kind, script, [kind], wrapper);
  const { port } = server;
  const pid = String(server.child.pid);
  try {
    process.stderr.write(`  ${kind}: warming up (${WARMUP} requests)\n`);
    await send(port, delivery, WARMUP);
    const perRequest: number[] = [];
    for (let batch = 0; batch <= options.samples; batch++) {
      spawnSync('callgrind_control', ['--zero', pid]);
      await send(port, delivery, options.perSample);
      spawnSync('callgrind_control', ['--dump', pid]);
      const instructions = (await nextDump(dir, batch)) / options.perSample;
      const label = batch === 0 ? 'uncounted batch' : `sample ${batch}/${options.samples}`;
      process.stderr.write(`  ${kind}: ${label}: ${Math.round(instructions)} instructions per request\n`);
      if (batch > 0) perRequest.push(instructions);
    }
    return perRequest;
  } finally {
    await stopBenchServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The markdown table of the counts, each median also as a ratio to `base`'s when it was counted. */
export function instructionsTable(results: Map<string, number[]>, base: string): string {
  const baseMedian = results.has(base) ? median(results.get(base) as number[]) : undefined;
  const rows = [...results].map(([kind, values]) => {
    const middle = median(values);
    return [
      kind,
      formatNumber(middle),
      values.map((value) => formatNumber(value)).join(', '),
      baseMedian === undefined ? '—' : `${(middle / baseMedian).toFixed(3)}×`,
    ];
  });
  return markdownTable(['server', 'instructions per request (median)', 'samples', `vs ${base}`], rows);
}
