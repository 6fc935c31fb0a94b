/**
 * `npm run demo`: the service simulator from @hookline/testing plays the messaging service against
 * examples/express (a real Express receiver with the memory store, started here as a child process
 * on a free port). Deliveries go through the service's real retry schedule (0, +30 s, +2 min, +10 min,
 * +1 h, +6 h, +24 h), compressed so the 31 hours pass in about 17 seconds.
 *
 * Each scenario states what the receiver should do; the demo checks it, prints the attempt table
 * and a verdict line, and exits 0 only if every scenario behaved as expected.
 *
 * The example honours two demo-only data fields: `demoFailTimes: N` (its handler throws on the
 * first N attempts) and `demoDelayMs` (its handler takes that long).
 *
 * `npm run demo -- --example node-http` runs another example from examples/ instead: any that follows
 * the examples' convention (PORT and WEBHOOK_SECRET from the environment, "listening" on stderr, one
 * JSON line per handler run on stdout) and honours the two demo fields.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { EVENT_NAMES } from '@hookline/core';
import {
  createDelivery,
  createServiceSimulator,
  type DeliveryAttempt,
  type DeliveryResult,
  formatAttemptTable,
  formatDuration,
  formatSummary,
  RETRY_SCHEDULE_MS,
  serializeDelivery,
  sign,
  summarise,
} from '@hookline/testing/kit';

/** 31 h 12 min 30 s of schedule × 0.00015 ≈ 17 s. */
const TIME_SCALE = 0.00015;
/**
 * The service's 30 s limit is not compressed here (it would be 4.5 ms): a real process on a busy
 * laptop needs real milliseconds to answer.
 */
const ATTEMPT_LIMIT_MS = 10_000;
const FULL_SCHEDULE_MS = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);

const { values: args } = parseArgs({ options: { example: { type: 'string', default: 'express' } }, allowPositionals: true });
const example = args.example ?? 'express';
const serverFile = `examples/${example}/src/server.ts`;
if (!existsSync(serverFile)) {
  console.error(`demo: no ${serverFile}; pass --example with one of the folders in examples/`);
  process.exit(2);
}

const secret = `whsec_demo_${randomBytes(6).toString('hex')}`;
const started = performance.now();

// 1. Start the example receiver on a free port and count its handler runs (one JSON line each).
const port = await freePort();
const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@hookline/source', serverFile], {
  env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: secret },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const handlerRuns = new Map<string, number>();
let pendingLine = '';
child.stdout.on('data', (chunk: Buffer) => {
  const lines = (pendingLine + chunk.toString('utf8')).split('\n');
  pendingLine = lines.pop() ?? '';
  for (const line of lines) {
    try {
      const { deliveryId } = JSON.parse(line) as { deliveryId: string };
      handlerRuns.set(deliveryId, (handlerRuns.get(deliveryId) ?? 0) + 1);
    } catch {
      // not one of the example's JSON lines
    }
  }
});
await new Promise<void>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`examples/${example} did not start within 30 s`)), 30_000);
  child.stderr.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('listening')) {
      clearTimeout(timer);
      resolve();
    }
  });
  child.once('exit', (code) => reject(new Error(`examples/${example} exited with code ${code} before listening`)));
});
const url = `http://127.0.0.1:${port}/webhooks`;

try {
  process.exitCode = await runScenarios();
} finally {
  child.kill('SIGTERM');
}

async function runScenarios(): Promise<number> {
  const simulator = createServiceSimulator({ url, secret, timeScale: TIME_SCALE, attemptTimeoutMs: ATTEMPT_LIMIT_MS });
  console.log(`hookline demo: the service simulator against examples/${example} at ${url}`);
  console.log(
    `retry schedule compressed ${Math.round(1 / TIME_SCALE)}×: ${formatDuration(FULL_SCHEDULE_MS)} of retries in ${formatDuration(FULL_SCHEDULE_MS * TIME_SCALE)}\n`,
  );

  // Live lines for the scenarios that retry; the 29 first-time deliveries are summed up at the end.
  const labels = new Map<string, string>();
  simulator.on('attempt', (attempt) => {
    const label = labels.get(attempt.deliveryId);
    if (label === undefined) return;
    const where = attempt.trigger === 'replay' ? 'replay' : `+${formatDuration(attempt.scheduleOffsetMs)}`;
    console.log(
      `  ${label.padEnd(24)} attempt ${attempt.attempt} (${where.padEnd(18)}) → ${attempt.responseCode ?? attempt.status} ${brief(attempt.responseBody)}`,
    );
  });

  // 2. The scenarios. Each check says what went wrong, or null when the receiver did the right thing.
  // They run after drain(), once the example's stdout (its handler runs) has surely arrived too.
  const checks: { name: string; expected: string; problem: () => Promise<string | null> }[] = [];

  // All 29 catalogue events, one delivery each: 200 on the first attempt.
  const catalogue = EVENT_NAMES.map((event) => simulator.send(createDelivery(event)));
  checks.push({
    name: 'all 29 catalogue events',
    expected: 'each verified, handled once, 200 on the first attempt',
    problem: () =>
      Promise.all(catalogue).then((results) => {
        const wrong = results.filter((r) => r.outcome !== 'succeeded' || r.attempts.length !== 1 || handlerRuns.get(r.deliveryId) !== 1);
        return wrong.length === 0 ? null : `${wrong.length} did not: ${wrong.map((r) => r.event).join(', ')}`;
      }),
  });

  // An event the catalogue does not list yet: still 200, or the service would retry it for 31 h.
  const unknown = createDelivery('voicemail.transcribed', { text: 'Rappelle-moi 🙂' });
  const unknownResult = simulator.send(unknown);
  checks.push({
    name: 'an event not in the catalogue',
    expected: '200 on the first attempt (a 4xx would be retried for 31 h)',
    problem: () => unknownResult.then((r) => (r.outcome === 'succeeded' && r.attempts.length === 1 ? null : describe(r))),
  });

  // A duplicate: the service replays a delivery that already succeeded.
  const delivered = await catalogue[EVENT_NAMES.indexOf('message.delivered')]!;
  labels.set(delivered.deliveryId, 'duplicate (replay)');
  const replayed = await simulator.replay(delivered.deliveryId);
  checks.push({
    name: 'a duplicate',
    expected: '200 {"duplicate":true}, the handler not run again',
    problem: async () =>
      replayed.responseCode === 200 && replayed.responseBody.includes('"duplicate":true') && handlerRuns.get(delivered.deliveryId) === 1
        ? null
        : `replay answered ${replayed.responseCode} ${brief(replayed.responseBody)}, handler ran ${handlerRuns.get(delivered.deliveryId) ?? 0}×`,
  });

  // An in-flight duplicate: a replay arrives while the first attempt's handler is still running (2 s).
  const slow = createDelivery('message.inbound', { demoDelayMs: 2_000 });
  labels.set(slow.deliveryId, 'in-flight duplicate');
  let inFlightReplay: Promise<DeliveryAttempt> | undefined;
  simulator.on('attempt-start', ({ deliveryId, attempt }) => {
    if (deliveryId === slow.deliveryId && attempt === 1) {
      // 200 ms lets attempt 1 reach the receiver and claim the delivery before the replay arrives.
      inFlightReplay = new Promise((resolve) => setTimeout(resolve, 200)).then(() => simulator.replay(slow.deliveryId));
    }
  });
  const slowResult = simulator.send(slow);
  checks.push({
    name: 'an in-flight duplicate',
    expected: 'the overlapping attempt gets 409 CONFLICT; the first gets 200; handler run once',
    problem: () =>
      slowResult.then(async (r) => {
        const replay = await inFlightReplay!;
        const first = r.attempts.find((a) => a.trigger === 'schedule');
        return replay.responseCode === 409 &&
          replay.responseBody.includes('CONFLICT') &&
          first?.responseCode === 200 &&
          handlerRuns.get(slow.deliveryId) === 1
          ? null
          : `replay answered ${replay.responseCode}, first attempt ${first?.responseCode}, handler ran ${handlerRuns.get(slow.deliveryId) ?? 0}×`;
      }),
  });

  // A handler that fails twice, then succeeds: 500, 500, 200 at 0, +30 s and +2 min 30 s.
  const flaky = createDelivery('call.completed', { demoFailTimes: 2 });
  labels.set(flaky.deliveryId, 'fails twice, then works');
  const flakyResult = simulator.send(flaky);
  checks.push({
    name: 'a handler that fails twice',
    expected: '500, 500, then 200 on the service schedule (0, +30 s, +2 min 30 s)',
    problem: () =>
      flakyResult.then((r) => {
        const codes = r.attempts.map((a) => a.responseCode).join(',');
        const offsets = r.attempts.map((a) => a.scheduleOffsetMs).join(',');
        return r.outcome === 'succeeded' && codes === '500,500,200' && offsets === '0,30000,150000' ? null : describe(r);
      }),
  });

  // A tampered delivery: signed, then one byte of the body changed. 401 every time, the service gives up.
  const original = serializeDelivery(createDelivery('message.read'));
  const tampered = original.replace('"message.read"', '"message.reaD"');
  const tamperedId = (JSON.parse(tampered) as { deliveryId: string }).deliveryId;
  labels.set(tamperedId, 'tampered body');
  // The signature is the original's: the service signed those bytes, someone changed them on the way.
  const tamperedResult = simulator.send(tampered, { signature: sign(original, secret) });
  checks.push({
    name: 'a tampered delivery',
    expected: '401 on all 7 attempts, then the service gives up; the handler never runs',
    problem: () =>
      tamperedResult.then((r) =>
        r.outcome === 'gave-up' &&
        r.attempts.length === 7 &&
        r.attempts.every((a) => a.responseCode === 401) &&
        !handlerRuns.has(tamperedId)
          ? null
          : describe(r),
      ),
  });

  const results = await simulator.drain();
  const problems = await Promise.all(checks.map((check) => check.problem()));

  // 3. The attempt table, the scenario checks and the verdict.
  console.log(`\n${formatAttemptTable(results)}\n`);
  console.log(formatSummary(summarise(results)));
  console.log();
  const width = Math.max(...checks.map((c) => c.name.length));
  checks.forEach((check, i) => {
    const problem = problems[i];
    console.log(
      `${problem === null ? '✔' : '✘'} ${check.name.padEnd(width)}  expected: ${check.expected}${problem === null ? '' : `\n    got: ${problem}`}`,
    );
  });
  const passed = problems.filter((p) => p === null).length;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const ok = passed === checks.length;
  console.log(
    `\n${ok ? 'demo passed' : 'demo FAILED'}: ${passed}/${checks.length} scenarios behaved as the receiver should ` +
      `(${results.length} deliveries, ${simulator.attempts().length} attempts, ${seconds} s)`,
  );
  return ok ? 0 : 1;
}

function describe(result: DeliveryResult): string {
  return `${result.outcome} after ${result.attempts.length} attempts: ${result.attempts.map((a) => a.responseCode ?? a.status).join(', ')}`;
}

function brief(body: string): string {
  const line = body.replace(/\s+/g, ' ');
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
