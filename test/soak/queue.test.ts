// Answer-fast mode under faults, on both queue backends: 3 web processes and 2 worker processes;
// every delivery is sent 2 or 3 times at once to different web processes (and again, like the
// service, until one attempt gets a 2xx); the first handler run of every fifth delivery fails; two
// workers are SIGKILLed mid-handler (and restarted); Redis (our own, with AOF) is restarted once for
// BullMQ, and PostgreSQL is cut once (through our own TCP proxy) for pg-boss. A corrupt job and a job
// for an event no handler takes are slipped into the queue. At the end: every delivery was answered
// 2xx, its handler's success is recorded exactly once (a re-run after a crash is only ever a later
// claim), none is lost, and the dead letters are exactly the deliveries made to fail for good, the
// corrupt job and the unhandled one, each with its reason. Workers are alive: no crash loop.
// `pnpm test` runs the short form (a few hundred deliveries); HOOKLINE_SOAK=full sends 2,000.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BullmqDeliveryQueue, bullmqQueue, jobIdFor as bullmqJobId } from '@hookline/bullmq';
import { EVENT_NAMES } from '@hookline/core';
import type { DeadLetter, DeliveryQueue } from '@hookline/core/adapter';
import { type PgBossDeliveryQueue, pgBossQueue } from '@hookline/pg-boss';
import { postgresStore } from '@hookline/postgres';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, requirePostgres } from '../support/servers';
import { freePort } from '../support/free-port';
import { startOwnRedis } from '../support/own-redis';

const FULL = process.env.HOOKLINE_SOAK === 'full';
const PLAN = FULL
  ? { deliveries: 2_000, sendOverMs: 30_000, kills: [6_000, 18_000], outageAt: 12_000 }
  : { deliveries: 300, sendOverMs: 6_000, kills: [1_500, 4_500], outageAt: 3_000 };
const PERMANENT_EVERY = 40; // every 40th delivery throws PermanentFailure
const SECRET = 'whsec_queue_soak_5c1e';
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const postgres = await requirePostgres();
const redisBinary = spawnSync('redis-server', ['--version']).status === 0;
if (!redisBinary) {
  const message = 'redis-server is not installed (apt-get install redis-server)';
  if (process.env.CI === 'true') throw new Error(`${message}; CI=true, so this is a failure, not a skip`);
  console.warn(`\n⚠️  SKIPPING the BullMQ queue soak: ${message}.\n`);
}

/** A TCP proxy in front of the shared PostgreSQL that the test can cut (it never touches the server). */
function startProxy(target: { host: string; port: number }): Promise<{ port: number; cut(ms: number): Promise<void>; close(): void }> {
  const sockets = new Set<Socket>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as { port: number }).port,
        async cut(ms) {
          refusing = true;
          for (const socket of sockets) socket.destroy();
          await sleep(ms);
          refusing = false;
        },
        close() {
          for (const socket of sockets) socket.destroy();
          server.close();
        },
      }),
    ),
  );
}

interface Backend {
  name: 'bullmq' | 'pg-boss';
  /** Environment every process of this backend gets. */
  env: Record<string, string>;
  /** The test's own handle on the queue: dead letters, and the jobs it slips in. */
  queue: DeliveryQueue;
  /** Adds a job whose payload is not a delivery; resolves with the deliveryId its dead letter shows. */
  addCorrupt(): Promise<string>;
  /** The fault of this backend: a Redis restart, or a PostgreSQL cut. */
  outage(): Promise<void>;
  cleanup(): Promise<void>;
}

function spawnRole(role: 'web' | 'worker', backend: Backend, extra: Record<string, string>, table: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@hookline/source', join(here, 'queue-process.ts')], {
    cwd: repoRoot,
    env: { ...process.env, ...backend.env, ...extra, ROLE: role, BACKEND: backend.name, SECRET, DATABASE_URL, SOAK_TABLE: table },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${role} process exited (${code}) before it was ready`)));
  });
}

interface Sent {
  deliveryId: string;
  permanent: boolean;
  statuses: number[];
  answered2xx: boolean;
}

/** Sends one delivery 2 or 3 times at once to distinct web processes, then again (one at a time) until a 2xx. */
async function sendDelivery(i: number, ports: number[]): Promise<Sent> {
  const permanent = i % PERMANENT_EVERY === PERMANENT_EVERY - 1;
  const delivery = createDelivery(EVENT_NAMES[i % EVENT_NAMES.length] as string, { seq: i, ...(permanent ? { permanent: true } : {}) });
  const payload = createSignedPayload(delivery, SECRET);
  const body = typeof payload.body === 'string' ? payload.body : new Uint8Array(payload.body);
  const post = async (port: number) => {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: payload.headers,
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0; // no answer (a process being killed): the service retries
    }
  };
  const copies = 2 + (i % 2);
  const start = i % ports.length;
  const targets = Array.from({ length: copies }, (_, k) => ports[(start + k) % ports.length] as number);
  const statuses = await Promise.all(targets.map(post));
  for (let retry = 0; retry < 25 && !statuses.some((s) => s >= 200 && s < 300); retry++) {
    await sleep(200 + retry * 100);
    statuses.push(await post(ports[(start + retry) % ports.length] as number));
  }
  return { deliveryId: delivery.deliveryId, permanent, statuses, answered2xx: statuses.some((s) => s >= 200 && s < 300) };
}

async function soak(backend: Backend, table: string, db: pg.Pool, children: ChildProcess[]): Promise<void> {
  await db.query(`CREATE TABLE ${table} (delivery_id text PRIMARY KEY, attempt int NOT NULL, pid int NOT NULL)`);
  await db.query(`CREATE TABLE ${table}_reruns (delivery_id text NOT NULL, attempt int NOT NULL, pid int NOT NULL)`);
  const ports = [await freePort(), await freePort(), await freePort()];
  const webs = await Promise.all(ports.map((port) => spawnRole('web', backend, { PORT: String(port) }, table)));
  const workers = await Promise.all([0, 1].map(() => spawnRole('worker', backend, {}, table)));
  children.push(...webs, ...workers);

  // The jobs no web process would enqueue: a corrupt payload, and an event no handler takes.
  const corruptId = await backend.addCorrupt();
  const unhandled = createDelivery('soak.no_such_event', {});
  await backend.queue.enqueue({ delivery: unhandled, receivedAt: Date.now(), secretIndex: 0 });

  const started = Date.now();
  const faults = (async () => {
    const events = [
      ...PLAN.kills.map((at) => ({
        at,
        run: async () => {
          const index = PLAN.kills.indexOf(at) % workers.length;
          (workers[index] as ChildProcess).kill('SIGKILL'); // mid-handler: they are busy all along
          await sleep(300);
          workers[index] = await spawnRole('worker', backend, {}, table);
          children.push(workers[index] as ChildProcess);
        },
      })),
      { at: PLAN.outageAt, run: () => backend.outage() },
    ].sort((a, b) => a.at - b.at);
    for (const event of events) {
      await sleep(Math.max(0, event.at - (Date.now() - started)));
      await event.run();
    }
  })();

  const pending: Promise<Sent>[] = [];
  for (let i = 0; i < PLAN.deliveries; i++) {
    pending.push(sendDelivery(i, ports));
    const wait = ((i + 1) * PLAN.sendOverMs) / PLAN.deliveries - (Date.now() - started);
    if (wait > 0) await sleep(wait);
  }
  await faults;
  const sent = await Promise.all(pending);
  const answeredAt = Date.now();

  const expectedRows = sent.filter((s) => !s.permanent).length;
  const expectedDead = new Set([...sent.filter((s) => s.permanent).map((s) => s.deliveryId), corruptId, unhandled.deliveryId]);
  const count = async () => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);
  let letters: DeadLetter[] = [];
  const deadline = Date.now() + (FULL ? 300_000 : 90_000);
  while (Date.now() < deadline) {
    letters = await backend.queue.deadLetters({ limit: 1_000 }).catch(() => letters);
    if ((await count()) >= expectedRows && letters.length >= expectedDead.size) break;
    await sleep(250);
  }
  const drainedMs = Date.now() - answeredAt;

  const rows = await db.query<{ delivery_id: string }>(`SELECT delivery_id FROM ${table}`);
  const reruns = await db.query<{ delivery_id: string; attempt: number }>(`SELECT delivery_id, attempt FROM ${table}_reruns`);
  const recorded = new Set(rows.rows.map((r) => r.delivery_id));
  const byStatus: Record<string, number> = {};
  for (const status of sent.flatMap((s) => s.statuses)) byStatus[status] = (byStatus[status] ?? 0) + 1;
  console.log(
    [
      `queue soak (${backend.name}, ${FULL ? 'full' : 'short'}): ${PLAN.deliveries} deliveries sent 2-3 times at once to 3 web processes over ${PLAN.sendOverMs / 1000} s, 2 workers`,
      `  faults: ${PLAN.kills.length} worker SIGKILLs, ${backend.name === 'bullmq' ? '1 Redis restart (AOF)' : '1 PostgreSQL cut'}, 20% first runs failing, 1 in ${PERMANENT_EVERY} permanent`,
      `  answers: ${JSON.stringify(byStatus)}; queue drained ${(drainedMs / 1000).toFixed(1)} s after the last answer`,
      `  handler successes recorded ${rows.rows.length} (expected ${expectedRows}); re-runs after a crash that found the row written: ${reruns.rows.length}; dead letters ${letters.length} (expected ${expectedDead.size})`,
    ].join('\n'),
  );

  expect(sent.filter((s) => !s.answered2xx).map((s) => s.deliveryId)).toEqual([]);
  // Exactly one recorded success per delivery that can succeed; none for the permanent ones; none lost.
  expect(rows.rows.length).toBe(expectedRows);
  expect(sent.filter((s) => !s.permanent && !recorded.has(s.deliveryId)).map((s) => s.deliveryId)).toEqual([]);
  expect(sent.filter((s) => s.permanent && recorded.has(s.deliveryId)).map((s) => s.deliveryId)).toEqual([]);
  // A second successful run only ever follows a crash, as a later claim: never two runs at once.
  for (const rerun of reruns.rows) expect(rerun.attempt).toBeGreaterThan(1);
  // The dead letters are exactly the deliveries made to fail for good, plus the two odd jobs, with reasons.
  expect(new Set(letters.map((letter) => letter.deliveryId))).toEqual(expectedDead);
  for (const letter of letters) {
    if (letter.deliveryId === corruptId) expect(letter.lastError).toMatch(/^corrupt job: /);
    else if (letter.deliveryId === unhandled.deliveryId) expect(letter.lastError).toBe('no handler takes soak.no_such_event any more');
    else expect(letter.lastError).toBe('PermanentFailure: soak: this delivery can never succeed');
  }
  // No crash loop: the workers that should be running are.
  for (const worker of workers) expect(worker.exitCode).toBeNull();
  expect(byStatus['202']).toBeGreaterThan(0);
}

describe.skipIf(!postgres.reachable)(`answer-fast soak under faults (${FULL ? 'full' : 'short'} form)`, () => {
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  const run = `${process.pid}_${Date.now().toString(36)}`;

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    await db.end();
  });

  it.skipIf(!redisBinary)(
    'BullMQ: every delivery handled once, none lost, the dead letters exactly the permanent failures',
    async () => {
      const table = `hookline_qsoak_b_${run}`;
      cleanups.push(() => db.query(`DROP TABLE IF EXISTS ${table}, ${table}_reruns`).then(() => {}));
      // AOF with fsync on every write: what the README asks for, so a restart keeps what was acknowledged.
      const redis = await startOwnRedis({ appendOnly: true });
      const redisPort = redis.port;
      const queueName = `soak-${run}`;
      const queue: BullmqDeliveryQueue = bullmqQueue({
        connection: { host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: null, retryStrategy: () => 100 },
        name: queueName,
        onError: () => {},
      });
      cleanups.push(async () => {
        await queue.close().catch(() => {});
        await redis.close();
      });
      const backend: Backend = {
        name: 'bullmq',
        env: { REDIS_PORT: String(redisPort), QUEUE_NAME: queueName },
        queue,
        async addCorrupt() {
          const deliveryId = `wdl_soak_corrupt_${randomUUID()}`;
          await queue.queue.add('garbage', { delivery: 'not an object' }, { jobId: bullmqJobId(deliveryId) });
          return deliveryId;
        },
        async outage() {
          await redis.kill();
          await sleep(500);
          await redis.start();
        },
        cleanup: async () => {},
      };
      await soak(backend, table, db, children);
    },
    FULL ? 10 * 60_000 : 150_000,
  );

  it(
    'pg-boss: every delivery handled once, none lost, the dead letters exactly the permanent failures',
    async () => {
      const table = `hookline_qsoak_p_${run}`;
      const bossSchema = `hookline_qsoak_boss_${run}`;
      const storeSchema = `hookline_qsoak_store_${run}`;
      cleanups.push(() => db.query(`DROP TABLE IF EXISTS ${table}, ${table}_reruns`).then(() => {}));
      cleanups.push(() => db.query(`DROP SCHEMA IF EXISTS ${bossSchema} CASCADE`).then(() => {}));
      cleanups.push(() => db.query(`DROP SCHEMA IF EXISTS ${storeSchema} CASCADE`).then(() => {}));
      const target = new URL(DATABASE_URL);
      const proxy = await startProxy({ host: target.hostname, port: Number(target.port || 5432) });
      cleanups.push(async () => proxy.close());
      const proxied = new URL(DATABASE_URL);
      proxied.port = String(proxy.port);
      proxied.hostname = '127.0.0.1';

      // The schemas exist before the processes start (each would create them, under pg-boss's lock).
      await postgresStore({ client: db, schema: storeSchema }).setup();
      const queueName = 'soak';
      const queue: PgBossDeliveryQueue = pgBossQueue({
        connectionString: DATABASE_URL,
        name: queueName,
        bossOptions: { schema: bossSchema, supervise: false, schedule: false, max: 2 },
        attempts: 10,
        backoff: { type: 'exponential', delayMs: 1_000 },
        expireInMs: 3_000,
        onError: () => {},
      });
      const boss = await queue.boss();
      cleanups.unshift(() => queue.close());
      const backend: Backend = {
        name: 'pg-boss',
        env: { PROXY_URL: proxied.toString(), QUEUE_NAME: queueName, BOSS_SCHEMA: bossSchema, STORE_SCHEMA: storeSchema },
        queue,
        async addCorrupt() {
          return (await boss.send(queueName, { delivery: 'not an object' })) as string;
        },
        outage: () => proxy.cut(1_500),
        cleanup: async () => {},
      };
      await soak(backend, table, db, children);
    },
    FULL ? 10 * 60_000 : 150_000,
  );
});
