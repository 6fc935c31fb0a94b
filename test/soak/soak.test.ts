// Soak under faults: the service simulator sends deliveries of every catalogue event to 3 receiver
// processes sharing one Redis (our own redis-server on a free port), 30% of handler calls fail at
// random, one receiver is SIGKILLed and restarted, and Redis is restarted once. At the end every
// delivery succeeded, and its handler's effect exists exactly once in Postgres (unique key).
// `pnpm test` runs the short form (< 60 s); `pnpm test:soak` (HOOKLINE_SOAK=full) the long one.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_NAMES } from '@hookline/core';
import { createDelivery, createServiceSimulator, type DeliveryResult } from '@hookline/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, requirePostgres } from '../support/servers';
import { freePort } from '../support/free-port';
import { type OwnRedis, startOwnRedis } from '../support/own-redis';

const FULL = process.env.HOOKLINE_SOAK === 'full';
const PLAN = FULL
  ? { deliveries: 5_000, sendOverMs: 40_000, kills: [6_000, 16_000, 28_000], redisRestartAt: 21_000 }
  : { deliveries: 600, sendOverMs: 8_000, kills: [2_500], redisRestartAt: 5_000 };
const SECRET = 'whsec_soak_1f7d3b';
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
// Retries on a compressed schedule: 12 attempts instead of 7 so 30% random failures (plus outages)
// cannot exhaust them by chance (0.3^12 ≈ 5e-7 per delivery).
const SCHEDULE = [0, 200, 400, 800, 1_600, 2_500, 3_000, 3_000, 3_000, 3_000, 3_000, 3_000];

const postgres = await requirePostgres();
const redisBinary = spawnSync('redis-server', ['--version']).status === 0;
if (!redisBinary) {
  const message = 'redis-server is not installed (apt-get install redis-server)';
  if (process.env.CI === 'true') throw new Error(`${message}; CI=true, so this is a failure, not a skip`);
  console.warn(`\n⚠️  SKIPPING the soak test: ${message}.\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startReceiver(port: number, redisPort: number, table: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@hookline/source', join(here, 'receiver-process.ts')], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port), REDIS_PORT: String(redisPort), DATABASE_URL, SOAK_TABLE: table, SECRET, FAIL_RATE: '0.3' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`receiver process exited (${code}) before it was ready`)));
  });
}

describe.skipIf(!postgres.reachable || !redisBinary)(`soak under faults (${FULL ? 'full' : 'short'} form)`, () => {
  const children: ChildProcess[] = [];
  const redisServers: OwnRedis[] = [];
  const table = `hookline_soak_${process.pid}_${Date.now().toString(36)}`;
  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(redisServers.map((redis) => redis.close()));
    await db.query(`DROP TABLE IF EXISTS ${table}, ${table}_reruns`).catch(() => {});
    await db.end();
  });

  it(
    'every delivery succeeds, its handler effect exists exactly once, none lost, the attempts show the retries',
    async () => {
      await db.query(`CREATE TABLE ${table} (delivery_id text PRIMARY KEY, event text NOT NULL, attempt int NOT NULL, pid int NOT NULL)`);
      await db.query(`CREATE TABLE ${table}_reruns (delivery_id text NOT NULL, pid int NOT NULL)`);
      // No persistence: the restart below starts Redis empty; a handler that then runs again finds its
      // row already written, and the unique key keeps the effect once.
      const redis = await startOwnRedis();
      redisServers.push(redis);
      const redisPort = redis.port;
      const ports = [await freePort(), await freePort(), await freePort()];
      const receivers = await Promise.all(ports.map((port) => startReceiver(port, redisPort, table)));
      children.push(...receivers);

      // Each attempt goes to one of the three processes at random, like a load balancer would.
      const balanced: typeof fetch = (input, init) => {
        const port = ports[Math.floor(Math.random() * ports.length)];
        return fetch(String(input).replace(/:\d+\//, `:${port}/`), init);
      };
      const simulator = createServiceSimulator({
        url: `http://127.0.0.1:${ports[0]}/webhooks`,
        secret: SECRET,
        fetch: balanced,
        schedule: SCHEDULE,
        attemptTimeoutMs: 5_000,
      });

      const started = Date.now();
      const faults = (async () => {
        const events: { at: number; run: () => Promise<void> }[] = [
          ...PLAN.kills.map((at) => ({
            at,
            run: async () => {
              const victim = receivers[0] as ChildProcess;
              victim.kill('SIGKILL');
              await sleep(500);
              receivers[0] = await startReceiver(ports[0] as number, redisPort, table);
              children.push(receivers[0]);
            },
          })),
          {
            at: PLAN.redisRestartAt,
            run: async () => {
              await redis.kill();
              await sleep(500);
              await redis.start();
            },
          },
        ].sort((a, b) => a.at - b.at);
        for (const event of events) {
          await sleep(Math.max(0, event.at - (Date.now() - started)));
          await event.run();
        }
      })();

      const pending: Promise<DeliveryResult>[] = [];
      const ids: string[] = [];
      for (let i = 0; i < PLAN.deliveries; i++) {
        const event = EVENT_NAMES[i % EVENT_NAMES.length] as string;
        const delivery = createDelivery(event, { seq: i });
        ids.push(delivery.deliveryId);
        pending.push(simulator.send(delivery));
        const due = ((i + 1) * PLAN.sendOverMs) / PLAN.deliveries;
        const wait = due - (Date.now() - started);
        if (wait > 0) await sleep(wait);
      }
      await faults;
      const results = await Promise.all(pending);
      const seconds = (Date.now() - started) / 1000;

      const rows = await db.query<{ n: string; distinct_ids: string; events: string }>(
        `SELECT count(*) AS n, count(DISTINCT delivery_id) AS distinct_ids, count(DISTINCT event) AS events FROM ${table}`,
      );
      const reruns = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}_reruns`)).rows[0]?.n ?? 0);
      const stored = new Set((await db.query<{ delivery_id: string }>(`SELECT delivery_id FROM ${table}`)).rows.map((r) => r.delivery_id));
      const attempts = results.flatMap((r) => r.attempts);
      const byStatus: Record<string, number> = {};
      for (const a of attempts) {
        const key = a.responseCode === null ? a.status : String(a.responseCode);
        byStatus[key] = (byStatus[key] ?? 0) + 1;
      }
      const retried = results.filter((r) => r.attempts.length > 1).length;
      const maxAttempts = Math.max(...results.map((r) => r.attempts.length));
      const lost = ids.filter((id) => !stored.has(id));
      const succeeded = results.filter((r) => r.outcome === 'succeeded').length;

      console.log(
        [
          `soak (${FULL ? 'full' : 'short'}): ${PLAN.deliveries} deliveries of ${EVENT_NAMES.length} event types to 3 processes in ${seconds.toFixed(1)} s`,
          `  faults: ${PLAN.kills.length} SIGKILL + restart of one receiver, 1 Redis restart, 30% handler failures`,
          `  outcomes: ${succeeded} succeeded, ${results.length - succeeded} not; rows in Postgres ${rows.rows[0]?.n} (distinct ${rows.rows[0]?.distinct_ids}, ${rows.rows[0]?.events} event types); lost ${lost.length}`,
          `  attempts: ${attempts.length} in all, ${retried} deliveries retried, at most ${maxAttempts} attempts; by answer ${JSON.stringify(byStatus)}`,
          `  handler re-runs after a crash that found the row already written (kept once by the unique key): ${reruns}`,
        ].join('\n'),
      );

      expect(succeeded).toBe(PLAN.deliveries);
      expect(lost).toEqual([]);
      expect(Number(rows.rows[0]?.n)).toBe(PLAN.deliveries);
      expect(Number(rows.rows[0]?.distinct_ids)).toBe(PLAN.deliveries);
      expect(Number(rows.rows[0]?.events)).toBe(EVENT_NAMES.length);
      expect(retried).toBeGreaterThan(PLAN.deliveries * 0.2); // 30% failures must show up as retries
      expect(byStatus['500']).toBeGreaterThan(0);
      simulator.stop();
    },
    FULL ? 15 * 60_000 : 120_000,
  );
});
