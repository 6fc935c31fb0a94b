/**
 * Cloudflare suite: answer-fast mode on Cloudflare Queues, in workerd through miniflare (the version
 * @hookline/cloudflare tests with). (1) Accepted deliveries/s of a Worker whose receiver runs in
 * synchronous mode (the Durable Object store, a no-op handler) against one in queue mode (the same
 * store and cloudflareQueue(), on a queue with no consumer so a round measures accepting alone),
 * interleaved rounds from a keep-alive HTTP client in this process; (2) jobs/s of the consumer Worker
 * (queueConsumer(), a receiver on the same store, a no-op handler) draining a queue filled while it was
 * held. Emulator figures stand for no production figure: only the ratios within one run are reported.
 * Prints one markdown section; progress goes to stderr. Everything lives in miniflare's memory.
 */
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createDelivery } from '@hookline/testing';
import { build } from 'esbuild';
import { Miniflare, Response as MiniflareResponse } from 'miniflare';
import { BENCH_SECRET, type SignedBody, signedPool } from '../lib/payloads';
import { formatMeasuredRatio, formatNumber, markdownTable, median, medianRoundRatio, spreadPercent } from '../lib/stats';
import { packageVersion } from '../lib/versions';

const knob = (name: string, fallback: number) => Number(process.env[`HOOKLINE_BENCH_CLOUDFLARE_${name}`] ?? fallback);
const options = {
  rounds: knob('ROUNDS', 5),
  seconds: knob('SECONDS', 4),
  warmupSeconds: knob('WARMUP_SECONDS', 3),
  connections: knob('CONNECTIONS', 32),
  jobRounds: knob('JOB_ROUNDS', 3),
  jobs: knob('JOBS', 1_000),
  batchSize: knob('BATCH', 10),
};
/** The suite runs the built packages, or the sources when run-all passed the source condition. */
const fromSources = process.execArgv.some((arg) => arg.includes('@hookline/source'));

async function bundle(file: string): Promise<string> {
  const result = await build({
    entryPoints: [new URL(file, import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: [...(fromSources ? ['@hookline/source'] : []), 'workerd', 'worker', 'browser'],
    logLevel: 'error',
  });
  return result.outputFiles[0]?.text as string;
}

/** Clock ticks per second of /proc's CPU times (100 on nearly every Linux). */
const TICK_MICROS = 10_000;

/** µs of CPU used so far by the workerd processes miniflare started (children of this process), or NaN off Linux. */
function workerdCpuMicros(): number {
  let total = 0;
  let found = false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return Number.NaN;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (command !== 'workerd' || Number(fields[1]) !== process.pid) continue;
    found = true;
    total += (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
  }
  return found ? total : Number.NaN;
}

const ownCpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

interface AcceptedSample {
  rps: number;
  workerdCpu: number;
  loadCpu: number;
  non2xx: number;
}

/** `connections` keep-alive loops POST the pool's deliveries for `seconds`; one delivery is sent once. */
async function load(url: URL, path: string, pool: SignedBody[], seconds: number, connections: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  let ok = 0;
  let non2xx = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const send = (body: SignedBody) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': body.bytes.length,
            'x-service-signature': body.hex,
            'x-service-event': 'message.inbound',
            'x-service-delivery-id': body.deliveryId,
          },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end(body.bytes);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline && next < pool.length) {
        const status = await send(pool[next++] as SignedBody);
        if (status >= 200 && status < 300) ok += 1;
        else non2xx += 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  if (next >= pool.length) process.stderr.write(`  (the pool of ${pool.length} ran out after ${elapsed.toFixed(1)} s)\n`);
  return { ok, non2xx, elapsed };
}

async function main(): Promise<void> {
  const [front, consumer] = await Promise.all([bundle('./front.worker.ts'), bundle('./consumer.worker.ts')]);
  let gateOpen = false;
  let gateWaiters: (() => void)[] = [];
  const gate = async (): Promise<Response> => {
    if (!gateOpen) await new Promise<void>((resolve) => gateWaiters.push(resolve));
    return new MiniflareResponse('open') as unknown as Response;
  };
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    compatibilityDate: '2024-09-23',
    workers: [
      {
        name: 'front',
        modules: true,
        script: front,
        bindings: { WEBHOOK_SECRET: BENCH_SECRET },
        durableObjects: { HOOKLINE_STORE: { className: 'HooklineStoreObject', useSQLite: true } },
        queueProducers: { ACCEPTED: 'bench-accepted', JOBS: 'bench-jobs' },
      },
      {
        name: 'consumer',
        modules: true,
        script: consumer,
        bindings: { WEBHOOK_SECRET: BENCH_SECRET },
        durableObjects: { HOOKLINE_STORE: { className: 'HooklineStoreObject', scriptName: 'front', useSQLite: true } },
        queueProducers: { JOBS: 'bench-jobs' },
        queueConsumers: { 'bench-jobs': { maxBatchSize: options.batchSize, maxBatchTimeout: 0.05, maxRetries: 3 } },
        serviceBindings: { NODE: gate as never },
      },
    ],
  });
  const url = await mf.ready;
  try {
    const accepted = await measureAccepted(url);
    const jobs = await measureJobs(mf, (open) => {
      gateOpen = open;
      if (open) for (const resume of gateWaiters.splice(0)) resume();
    });
    gateWaiters = [];
    process.stdout.write(`${section(accepted, jobs).join('\n')}\n`);
  } finally {
    gateOpen = true;
    for (const resume of gateWaiters.splice(0)) resume();
    await mf.dispose();
  }
}

const MODES = [
  { kind: 'synchronous mode, Durable Object store', path: '/sync' },
  { kind: 'queue mode, Cloudflare Queues', path: '/queue' },
] as const;

async function measureAccepted(url: URL): Promise<Map<string, AcceptedSample[]>> {
  const samples = new Map<string, AcceptedSample[]>(MODES.map(({ kind }) => [kind, []]));
  const poolSize = new Map<string, number>();
  for (const { kind, path } of MODES) {
    const warm = await load(url, path, signedPool('message.inbound', 1024, 200_000), options.warmupSeconds, options.connections);
    poolSize.set(kind, Math.ceil((warm.ok / warm.elapsed) * options.seconds * 2) + 2_000);
    process.stderr.write(`  warm-up ${kind}: ${Math.round(warm.ok / warm.elapsed)} req/s\n`);
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const { kind, path } of round % 2 === 0 ? MODES : [...MODES].reverse()) {
      const pool = signedPool('message.inbound', 1024, poolSize.get(kind) as number);
      const workerdBefore = workerdCpuMicros();
      const ownBefore = ownCpuMicros();
      const result = await load(url, path, pool, options.seconds, options.connections);
      const answered = result.ok + result.non2xx;
      const sample = {
        rps: result.ok / result.elapsed,
        workerdCpu: (workerdCpuMicros() - workerdBefore) / answered,
        loadCpu: (ownCpuMicros() - ownBefore) / answered,
        non2xx: result.non2xx,
      };
      process.stderr.write(`  round ${round + 1} ${kind}: ${Math.round(sample.rps)} accepted/s\n`);
      samples.get(kind)?.push(sample);
    }
  }
  return samples;
}

interface JobSample {
  rate: number;
  workerdCpu: number;
  fillSeconds: number;
}

async function measureJobs(mf: Miniflare, setGate: (open: boolean) => void): Promise<JobSample[]> {
  // A fetcher of the consumer Worker itself (its isolate keeps the count).
  const consumer = (await mf.getWorker('consumer')) as unknown as { fetch(url: string): Promise<Response> };
  const handled = async () => ((await (await consumer.fetch('http://consumer/')).json()) as { handled: number }).handled;
  const samples: JobSample[] = [];
  for (let round = 0; round < options.jobRounds; round++) {
    setGate(false);
    const before = await handled();
    const fillStarted = performance.now();
    const chunks = Array.from({ length: Math.ceil(options.jobs / 100) }, (_, i) =>
      Array.from({ length: Math.min(100, options.jobs - i * 100) }, () => ({
        delivery: createDelivery('message.delivered'),
        receivedAt: Date.now(),
        secretIndex: 0,
      })),
    );
    for (let i = 0; i < chunks.length; i += 4) {
      await Promise.all(
        chunks.slice(i, i + 4).map(async (chunk) => {
          const response = await mf.dispatchFetch('http://front/fill', { method: 'POST', body: JSON.stringify(chunk) });
          if (!response.ok) throw new Error(`filling the queue failed: ${response.status} ${await response.text()}`);
          await response.arrayBuffer();
        }),
      );
    }
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const workerdBefore = workerdCpuMicros();
    const started = performance.now();
    setGate(true);
    const deadline = started + 300_000;
    while ((await handled()) - before < options.jobs) {
      if (performance.now() > deadline) throw new Error('the consumer did not drain the queue within 5 minutes');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const sample = { rate: options.jobs / seconds, workerdCpu: (workerdCpuMicros() - workerdBefore) / options.jobs, fillSeconds };
    process.stderr.write(`  drain ${round + 1}: ${Math.round(sample.rate)} jobs/s (filled in ${fillSeconds.toFixed(1)} s)\n`);
    samples.push(sample);
  }
  return samples;
}

function section(accepted: Map<string, AcceptedSample[]>, jobs: JobSample[]): string[] {
  const [sync = [], queued = []] = [...accepted.values()];
  const rps = (samples: AcceptedSample[]) => samples.map((s) => s.rps);
  const ratio = medianRoundRatio(rps(queued), rps(sync));
  const rows = [...accepted].map(([kind, samples]) => [
    kind,
    formatNumber(median(rps(samples))),
    `±${spreadPercent(rps(samples)).toFixed(1)}%`,
    formatNumber(median(samples.map((s) => s.workerdCpu)), 1),
    formatNumber(median(samples.map((s) => s.loadCpu)), 1),
    String(samples.reduce((sum, s) => sum + s.non2xx, 0)),
    formatMeasuredRatio(medianRoundRatio(rps(samples), rps(sync))),
  ]);
  const rates = jobs.map((s) => s.rate);
  const jobRate = median(rates);
  const queuedRate = median(rps(queued));
  return [
    '## Answer-fast mode on Cloudflare (workerd through miniflare)',
    '',
    `Cloudflare Queues and Durable Objects as miniflare ${packageVersion('miniflare')} emulates them in one local workerd process, with @hookline/cloudflare ${packageVersion('@hookline/cloudflare')} (${fromSources ? 'the sources' : 'the built package'}): miniflare's figures say nothing of Cloudflare's, only the ratios within this run carry meaning. Accepted deliveries/s: a Worker's receiver with a no-op handler and the Durable Object store, synchronous mode (claim, handler, complete: two requests to the store's object) vs queue mode (claim, the queue's send, the job's record, complete: three requests to objects and one send), on a queue with no consumer so a round measures accepting alone; a keep-alive HTTP client in this process at ${options.connections} connections, fresh 1 KB deliveries signed before each round, ${options.rounds} interleaved rounds of ${options.seconds} s after a ${options.warmupSeconds} s warm-up each; "vs synchronous" is the median of the per-round ratios; workerd CPU µs per delivery from its process's CPU time (the Workers, the objects and the queue broker together), load generator CPU µs from this process.`,
    '',
    markdownTable(
      ['mode', 'accepted/s (median)', 'spread', 'workerd CPU µs/delivery', 'load generator CPU µs/delivery', 'non-2xx', 'vs synchronous'],
      rows,
    ),
    '',
    `**Queue mode accepts ${formatMeasuredRatio(ratio)} synchronous mode's deliveries/s with the Durable Object store in this run (no target is set for emulated figures).**`,
    '',
    `Consumer: the consumer Worker's queue() handler (queueConsumer(), a receiver on the same store with a no-op handler: per job the record's check, the receiver's claim and completion, the record's completion) draining ${formatNumber(options.jobs)} jobs enqueued while it was held (its first batch waited on a gate), batches of ${options.batchSize} (miniflare hands a queue's batches over one at a time), ${options.jobRounds} rounds; jobs/s from the gate's opening to the last handler run.`,
    '',
    markdownTable(
      ['consumer', 'jobs/s (median)', 'spread', 'workerd CPU µs/job', 'vs queue mode accepted/s'],
      [
        [
          'queueConsumer(), Durable Object store',
          formatNumber(jobRate),
          `±${spreadPercent(rates).toFixed(1)}%`,
          formatNumber(median(jobs.map((s) => s.workerdCpu)), 1),
          formatMeasuredRatio(jobRate / queuedRate),
        ],
      ],
    ),
    '',
    `**One consumer drains ${formatMeasuredRatio(jobRate / queuedRate)} the deliveries/s queue mode accepts in this run (miniflare runs one consumer invocation per queue at a time; Cloudflare scales consumers out).**`,
    '',
  ];
}

await main();
