/**
 * Instructions per request of the saturation servers (server.ts), counted by valgrind's callgrind:
 * `npx tsx src/saturation/instructions.ts [hand-written] [contract] [bridge] [handle]` from bench/ (all
 * four by default; needs `apt-get install valgrind`). Not a suite, so `pnpm bench` does not run it.
 *
 * Why: a change worth 1–2% of a request cannot be seen in wrk rounds, which move by several percent
 * on a small virtual machine; an instruction count of the same code on the same requests comes back
 * within about 1%. It measures instructions only: a change that allocates less, or touches less
 * memory, may gain more time than instructions (on a 2-core VM the bridge ran about 6% more
 * instructions per request than the hand-written receiver, and 15–25% more time), so confirm a real
 * gain with the suite.
 *
 * Each server runs under callgrind (some 50 times slower) on the built packages (`pnpm build` first,
 * as for the suites), gets 9,000 requests so that V8 has optimised its hot code, then SAMPLES batches
 * of PER_SAMPLE requests, the counters zeroed before each and dumped after it (callgrind_control).
 * Callgrind counts every thread, V8's background compiler and garbage collector included: the first
 * batch after 9,000 requests still counted about 60% more than the later ones, so one batch more goes
 * first, uncounted. The requests are the saturation suite's: one signed 1 KB delivery repeated, so
 * every request after the first is a duplicate. The node binary has no symbols, so callgrind's
 * per-function figures say little; the totals are what this reads.
 *
 * HOOKLINE_INSTRUCTIONS_SAMPLES (default 5) and HOOKLINE_INSTRUCTIONS_REQUESTS (per sample, default
 * 3000) trade time for precision.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchServer, stopBenchServer } from '../lib/bench-process';
import { signedPool } from '../lib/payloads';
import { formatNumber, markdownTable, median } from '../lib/stats';

const SAMPLES = Number(process.env.HOOKLINE_INSTRUCTIONS_SAMPLES ?? 5);
const PER_SAMPLE = Number(process.env.HOOKLINE_INSTRUCTIONS_REQUESTS ?? 3000);
const WARMUP = 9_000;
const IN_FLIGHT = 8;
const KINDS = ['hand-written', 'contract', 'bridge', 'handle'] as const;
type Kind = (typeof KINDS)[number];
const here = dirname(fileURLToPath(import.meta.url));

if (spawnSync('valgrind', ['--version']).error !== undefined) {
  process.stderr.write('instructions.ts needs valgrind: apt-get install valgrind\n');
  process.exit(1);
}

/** Sends `count` POSTs of the delivery, IN_FLIGHT at a time on kept-alive connections; every answer must be 200. */
function send(port: number, delivery: { text: string; hex: string; deliveryId: string }, count: number): Promise<void> {
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

async function count(kind: Kind, delivery: { text: string; hex: string; deliveryId: string }): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), `hookline-instructions-${kind}-`));
  const server = await startBenchServer(
    kind,
    join(here, 'server.ts'),
    [kind],
    [
      'valgrind',
      '--quiet',
      '--tool=callgrind',
      '--smc-check=all-non-file', // V8 writes and rewrites machine code at run time
      `--callgrind-out-file=${join(dir, 'out.%p')}`,
    ],
  );
  const { port } = server;
  const pid = String(server.child.pid);
  try {
    process.stderr.write(`  ${kind}: warming up (${WARMUP} requests)\n`);
    await send(port, delivery, WARMUP);
    const perRequest: number[] = [];
    for (let batch = 0; batch <= SAMPLES; batch++) {
      spawnSync('callgrind_control', ['--zero', pid]);
      await send(port, delivery, PER_SAMPLE);
      spawnSync('callgrind_control', ['--dump', pid]);
      const instructions = (await nextDump(dir, batch)) / PER_SAMPLE;
      const label = batch === 0 ? 'uncounted batch' : `sample ${batch}/${SAMPLES}`;
      process.stderr.write(`  ${kind}: ${label}: ${Math.round(instructions)} instructions per request\n`);
      if (batch > 0) perRequest.push(instructions);
    }
    return perRequest;
  } finally {
    await stopBenchServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((kind) => !(KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0) throw new Error(`unknown server ${unknown.join(', ')}; choose among ${KINDS.join(', ')}`);
  const kinds = asked.length === 0 ? [...KINDS] : (asked as Kind[]);
  const [delivery] = signedPool('message.inbound', 1024, 1);
  if (delivery === undefined) throw new Error('no delivery');
  const results = new Map<Kind, number[]>();
  for (const kind of kinds) results.set(kind, await count(kind, delivery));
  const base = results.has('hand-written') ? median(results.get('hand-written') as number[]) : undefined;
  const rows = kinds.map((kind) => {
    const values = results.get(kind) as number[];
    const middle = median(values);
    return [
      kind,
      formatNumber(middle),
      values.map((value) => formatNumber(value)).join(', '),
      base === undefined ? '—' : `${(middle / base).toFixed(3)}×`,
    ];
  });
  process.stdout.write(`${markdownTable(['server', 'instructions per request (median)', 'samples', 'vs hand-written'], rows)}\n`);
}

await main();
