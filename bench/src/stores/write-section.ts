/** The markdown of the stores suite's throughput and memory parts, with their target lines. */
import { availableParallelism } from 'node:os';
import { pinningNote } from '../lib/pinning';
import { formatMeasuredWithCeiling, formatNumber, formatRatio, markdownTable, median, medianRoundRatio, spreadPercent } from '../lib/stats';
import { packageVersion } from '../lib/versions';
import type { BytesSample } from './bytes-per-record';
import { type StoreKind, serverOf, storeLabel } from './open-store';
import type { ThroughputOptions, ThroughputSample } from './throughput';

/** Throughput targets, as a fraction of the memory store's req/s in the same run. */
const TARGETS: { kinds: StoreKind[]; name: string; min: number }[] = [
  { kinds: ['node-redis', 'ioredis'], name: 'Redis store', min: 0.7 },
  { kinds: ['postgres'], name: 'Postgres store', min: 0.5 },
  { kinds: ['sqlite'], name: 'SQLite store', min: 0.5 },
  { kinds: ['mysql'], name: 'MySQL store', min: 0.4 },
];
const MAX_BYTES_PER_RECORD = 100;

const target = (text: string, measured: string, met: boolean) => `**Target: ${text} → measured ${measured} (${met ? 'met' : 'MISSED'}).**`;

/** Per round, the store's req/s over the memory store's in that same round; the median of those. */
function ratioToMemory(samples: Map<StoreKind, ThroughputSample[]>, kind: StoreKind): number {
  const rps = (of: StoreKind) => (samples.get(of) ?? []).map((s) => s.rps);
  return medianRoundRatio(rps(kind), rps('memory'));
}

/**
 * The memory store's receiver CPU per request over this store's, both under autocannon (few answers
 * have to wake the generator, see `ThroughputSample.steadyCpuPerRequest`): how many deliveries one receiver
 * core serves with this store, relative to the memory store, when the database has cores of its own.
 */
function cpuRatioToMemory(samples: Map<StoreKind, ThroughputSample[]>, kind: StoreKind): number {
  const cpu = (k: StoreKind) => median((samples.get(k) ?? []).map((s) => s.steadyCpuPerRequest));
  return cpu('memory') / cpu(kind);
}

/**
 * A store's CPU per request on the whole machine, median across rounds: the receiver, the database
 * server and the load generator. Undefined when the database's share could not be read.
 */
function machineCpu(samples: Map<StoreKind, ThroughputSample[]>, kind: StoreKind): number | undefined {
  const totals: number[] = [];
  for (const s of samples.get(kind) ?? []) {
    if (s.databaseCpuPerRequest === undefined) return undefined;
    totals.push(s.cpuPerRequest + s.databaseCpuPerRequest + s.loadCpuPerRequest);
  }
  return totals.length === 0 ? undefined : median(totals);
}

/**
 * The memory store's machine CPU per request over this store's: at the costs per request measured,
 * with every core busy, the most this store's req/s could be as a fraction of the memory store's.
 */
function machineCeiling(samples: Map<StoreKind, ThroughputSample[]>, kind: StoreKind): number | undefined {
  const memory = machineCpu(samples, 'memory');
  const store = machineCpu(samples, kind);
  return memory === undefined || store === undefined ? undefined : memory / store;
}

const perRequest = (values: readonly number[]) => formatNumber(median(values), 1);

/** Where each store's CPU per request goes, on the whole machine. */
function cpuBudgetTable(samples: Map<StoreKind, ThroughputSample[]>): string {
  const rows = [...samples].map(([kind, list]) => {
    const database = list.map((s) => s.databaseCpuPerRequest);
    const total = machineCpu(samples, kind);
    const ceiling = machineCeiling(samples, kind);
    return [
      storeLabel(kind),
      perRequest(list.map((s) => s.cpuPerRequest)),
      serverOf(kind) === undefined
        ? 'in the receiver'
        : database.includes(undefined)
          ? 'not on this host'
          : perRequest(database as number[]),
      perRequest(list.map((s) => s.loadCpuPerRequest)),
      total === undefined ? '—' : formatNumber(total, 1),
      ceiling === undefined ? '—' : formatRatio(ceiling),
    ];
  });
  return markdownTable(
    ['store', 'receiver µs / request', 'database server µs / request', 'load generator µs / request', 'all three', 'ceiling vs memory'],
    rows,
  );
}

function generatorSentence(options: ThroughputOptions & { generatorVersion: string; wrkInstalled: boolean }): string {
  const fresh = `${options.connections} connections and sends 1 KB deliveries, each with a fresh deliveryId and signature, so every request is a real claim and completion in the store.`;
  return options.generator === 'wrk'
    ? `The load generator is wrk (${options.generatorVersion}), 1 thread, in another process, with ${fresh} The deliveries are signed before each round, so the generator only sends: autocannon, which signs each request in Node, cost about as much CPU per request as the receiver, on the core the database servers share with it, and held the stores that use one below what the machine can do. But wrk, faster than every receiver here, sleeps whenever it has read every answer, and a receiver pays in its own system time for each answer that must wake it (about 10 µs each on a 2-core KVM machine). How often depends on how a store's answers leave, not on its work: the memory store's receiver answers each delivery as it reads it, one at a time, and woke wrk after 0.14–0.34 of its answers there (0.85 in some rounds); the SQLite store answers a turn's deliveries together, after one transaction, and woke it after 0.03–0.05. So under wrk the memory store, the baseline of every ratio, pays most for the generator: on a quiet 2-core virtual machine its receiver cost 58.6 µs per request, 1.7× the 34 µs the same bridge cost under autocannon in the HTTP suites, and the SQLite store came out 1.15× faster. Each store's turn in a round therefore has a second round of the same length under autocannon (${packageVersion('autocannon')}, ${options.connections} connections, signing in its own process, so it is seldom asleep when an answer comes): the receiver's CPU per request there is the like-for-like cost of each store, and "per receiver core vs memory" is judged on it. req/s and the targets stay wrk's.`
    : `The load generator is ${options.generatorVersion} in another process (${options.wrkInstalled ? 'chosen with HOOKLINE_BENCH_STORES_GENERATOR=autocannon' : 'wrk is not installed here: `apt-get install wrk`'}), with ${fresh} It signs each request itself, at a CPU cost per request close to the receiver's.`;
}

export function throughputSection(
  samples: Map<StoreKind, ThroughputSample[]>,
  options: ThroughputOptions & { generatorVersion: string; wrkInstalled: boolean; measuredOn: string },
): string {
  const rows = [...samples].map(([kind, list]) => [
    storeLabel(kind),
    formatNumber(median(list.map((s) => s.rps))),
    `±${spreadPercent(list.map((s) => s.rps)).toFixed(1)}%`,
    `${median(list.map((s) => s.p50))} ms`,
    `${median(list.map((s) => s.p99))} ms`,
    formatNumber(median(list.map((s) => s.cpuPerRequest)), 1),
    formatNumber(median(list.map((s) => s.steadyCpuPerRequest)), 1),
    String(list.reduce((sum, s) => sum + s.non2xx + s.errors, 0)),
    formatRatio(ratioToMemory(samples, kind)),
    formatRatio(cpuRatioToMemory(samples, kind)),
  ]);
  const targets = TARGETS.flatMap(({ kinds, name, min }) =>
    kinds.map((kind) => {
      const text = `${storeLabel(kind)} ≥ ${formatRatio(min)} the memory store's throughput`;
      if (!samples.has(kind))
        return `**Target: ${text} → not measured (${name}: its server unreachable, or left out by HOOKLINE_BENCH_STORES_ONLY).**`;
      const ratio = ratioToMemory(samples, kind);
      return target(text, formatMeasuredWithCeiling(ratio, min, machineCeiling(samples, kind)), ratio >= min);
    }),
  );
  return [
    `Each store behind its own server process: hookline's node:http bridge (\`createNodeHandler\` from @hookline/core ${packageVersion('@hookline/core')}, measured on ${options.measuredOn}) with one no-op handler on 127.0.0.1; Redis and PostgreSQL are the local servers on loopback, each run under a key prefix / schema of its own, deleted afterwards. ${generatorSentence(options)} A ${options.warmupSeconds} s warm-up per server, then ${options.rounds} interleaved rounds of ${options.seconds} s (A B C D, D C B A, …); req/s and latencies are medians across rounds (spread ± half the IQR), "vs memory" is the median of the per-round ratios to the memory store. CPU is the receiver process's user + system µs per request (process.cpuUsage), not counting Redis's or PostgreSQL's own; the Postgres store uses a pg Pool of ${options.pgPoolMax} (pg's default is 10). ${pinningNote()} Redis and PostgreSQL are not pinned: they take whatever core is free, as a database on the same host would.`,
    '',
    markdownTable(
      [
        'store',
        'req/s (median)',
        'spread',
        'p50',
        'p99',
        'server CPU µs / request',
        'same, under autocannon',
        'non-2xx + errors',
        'vs memory',
        'per receiver core vs memory',
      ],
      rows,
    ),
    '',
    "On this machine the load generator, the receiver and Redis or PostgreSQL share two cores, so req/s also measures how much CPU the database server takes from the other two. The last column leaves that out: the memory store's receiver CPU per request over this store's, both under autocannon (whose answers seldom have to wake it), that is how many deliveries one receiver core serves with this store where the database runs on cores (or a host) of its own. The targets are judged on req/s, as set: under wrk they flatter the stores that batch their answers (above).",
    '',
    `Where each request's CPU goes on the whole machine, medians across the same rounds: the receiver process; the database server, all its processes (from /proc, before and after each round; SQLite and the memory store run inside the receiver); and the load generator (${options.generator === 'wrk' ? 'its signing done before the round' : 'signing included'}). At these costs per request and with all ${availableParallelism()} cores busy, a store's req/s could reach at most the memory store's times "ceiling vs memory" (the memory store's "all three" over this store's), however the work were spread across the cores. It is a reading of this run, not a law: the costs move with load (a store's batches grow, the load generator spends less per request when answers come faster).`,
    '',
    cpuBudgetTable(samples),
    '',
    targets.join('\n\n'),
  ].join('\n');
}

export function bytesSection(samples: BytesSample[]): string {
  const perRecord = samples.map((s) => s.bytesPerRecord);
  const bytes = median(perRecord);
  const records = samples[0]?.records ?? 0;
  return [
    `Memory: ${formatNumber(records)} deliveries claimed and completed in a fresh memory store (\`bench/src/stores/memory-bytes.ts\`, keys built as the receiver builds them from ids parsed out of JSON), heap measured after forced GCs before and after; ${samples.length} runs, each in its own process.`,
    '',
    markdownTable(
      ['records', 'heap before (median)', 'heap after (median)', 'bytes per completed record (median)', 'runs'],
      [
        [
          formatNumber(records),
          `${median(samples.map((s) => s.heapBeforeMB))} MB`,
          `${median(samples.map((s) => s.heapAfterMB))} MB`,
          formatNumber(bytes),
          perRecord.join(', '),
        ],
      ],
    ),
    '',
    target(
      `memory store ≤ ${MAX_BYTES_PER_RECORD} bytes per completed record at ${formatNumber(records)} records`,
      `${formatNumber(bytes)} bytes`,
      bytes <= MAX_BYTES_PER_RECORD,
    ),
  ].join('\n');
}
