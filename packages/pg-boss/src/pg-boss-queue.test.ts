import { randomUUID } from 'node:crypto';
import type { JobResult, QueuedDelivery, QueueJob } from '@hookline/core/adapter';
import { createDelivery, requireServer } from '@hookline/testing';
import pg from 'pg';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobIdFor, uuidV5 } from './job-id';
import { type PgBossDeliveryQueue, pgBossQueue } from './pg-boss-queue';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
// Every run has its own pg-boss schema; afterAll drops it.
const schema = `hookline_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const fast = { attempts: 3, backoff: { type: 'fixed', delayMs: 0 }, pollingIntervalMs: 50, onError: () => {} } as const;

function queued(deliveryId?: string, extra: Partial<QueuedDelivery> = {}): QueuedDelivery {
  const delivery = createDelivery('message.delivered', { messageId: 'msg_é✓' }, deliveryId === undefined ? {} : { deliveryId });
  return { delivery, receivedAt: Date.now(), secretIndex: 1, ...extra };
}

/** Why a payload is no queued delivery, in the words of core's checkQueuedDelivery (its first checks). */
function shapeProblem(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'the job payload is not an object';
  const { delivery, receivedAt, secretIndex } = payload as Partial<QueuedDelivery>;
  if (typeof delivery !== 'object' || delivery === null) return 'the job payload has no delivery';
  if (typeof delivery.event !== 'string') return 'the queued delivery has no event';
  if (typeof receivedAt !== 'number' || typeof secretIndex !== 'number') return 'the job payload lacks receivedAt or secretIndex';
  return undefined;
}

describe('job ids', () => {
  it('are UUID v5 (the RFC 9562 example), one per deliveryId', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(jobIdFor('wdl_a')).toBe(jobIdFor('wdl_a'));
    expect(jobIdFor('wdl_a')).not.toBe(jobIdFor('wdl_b'));
    expect(jobIdFor('wdl_a')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('pgBossQueue options', () => {
  it('takes durations in milliseconds, and names the new option for an old one', () => {
    const old = { connectionString: 'postgres://127.0.0.1/test', retryDelaySeconds: 1 };
    expect(() => pgBossQueue(old as never)).toThrow(new TypeError('pgBossQueue: `retryDelaySeconds` is now `backoff.delayMs`'));
    expect(() => pgBossQueue({ connectionString: 'postgres://127.0.0.1/test', backoff: { type: 'fixed', delayMs: -1 } })).toThrow(
      /backoff\.delayMs/,
    );
  });

  it("speaks the queues' vocabulary: `backoff` for the delay and its growth, the old names refused", () => {
    const url = 'postgres://127.0.0.1/test';
    expect(() => pgBossQueue({ connectionString: url, retryDelayMs: 1_000 } as never)).toThrow(
      new TypeError('pgBossQueue: `retryDelayMs` is now `backoff.delayMs`'),
    );
    expect(() => pgBossQueue({ connectionString: url, retryBackoff: false } as never)).toThrow(
      new TypeError("pgBossQueue: `retryBackoff` is now `backoff.type`, 'exponential' (was true) or 'fixed' (was false)"),
    );
    expect(() => pgBossQueue({ connectionString: url, backoff: { type: 'linear', delayMs: 1 } as never })).toThrow(/backoff\.type/);
  });
});

describe.skipIf(!server.reachable)('pgBossQueue', () => {
  let first: PgBossDeliveryQueue;
  let boss: PgBoss;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });

  beforeAll(async () => {
    first = pgBossQueue({
      connectionString: DATABASE_URL,
      name: 'basic',
      bossOptions: { schema, supervise: false, schedule: false, max: 4 },
      ...fast,
    });
    boss = await first.boss();
  });
  afterAll(async () => {
    await first?.close();
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  // The other queues share the first one's PgBoss (the `boss` option), each under its own name.
  const open = (name: string) => pgBossQueue({ boss, name, schema, ...fast });
  /** A job's row as these tests look at it: state, counters, and how far off start_after and keep_until are. */
  const row = async (id: string) =>
    (
      await pool.query(
        `SELECT state, retry_count, started_on, extract(epoch FROM start_after - now())::float8 AS due_in_s,
                extract(epoch FROM keep_until - now())::float8 AS kept_for_s
           FROM ${schema}.job WHERE id = $1`,
        [id],
      )
    ).rows[0] as { state: string; retry_count: number; started_on: Date | null; due_in_s: number; kept_for_s: number };

  it("gives each job the backoff as pg-boss's retry settings: whole seconds, exponential as retryBackoff", async () => {
    const exponential = pgBossQueue({ boss, name: 'backoff-exponential', schema, backoff: { type: 'exponential', delayMs: 1_500 } });
    const fixed = open('backoff-fixed');
    const settings = async (queue: PgBossDeliveryQueue, job: QueuedDelivery) => {
      await queue.enqueue(job);
      const { rows } = await pool.query(`SELECT retry_limit, retry_delay, retry_backoff FROM ${schema}.job WHERE id = $1`, [
        jobIdFor(job.delivery.deliveryId),
      ]);
      return rows[0];
    };
    expect(await settings(exponential, queued())).toEqual({ retry_limit: 6, retry_delay: 2, retry_backoff: true });
    expect(await settings(fixed, queued())).toEqual({ retry_limit: 2, retry_delay: 0, retry_backoff: false });
  });

  it('enqueues once per deliveryId, keeps the payload and trace context, and hands it to a worker', async () => {
    const job = queued('wdl_10:20', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=x' });
    expect(await first.enqueue(job)).toEqual({ duplicate: false });
    expect(await first.enqueue({ ...job, receivedAt: job.receivedAt + 5 })).toEqual({ duplicate: true });
    expect(await first.enqueue(queued('123456'))).toEqual({ duplicate: false });
    const seen: QueueJob[] = [];
    const worker = first.work(
      async (got) => {
        seen.push(got);
        return { status: 'done' };
      },
      { concurrency: 2 },
    );
    await vi.waitFor(() => expect(seen).toHaveLength(2), { timeout: 10_000 });
    await worker.close();
    const got = seen.find((one) => (one.payload as QueuedDelivery).delivery.deliveryId === 'wdl_10:20');
    expect(got).toEqual({ payload: JSON.parse(JSON.stringify(job)), attempt: 1, maxAttempts: 3 });
    expect(await first.enqueue(job)).toEqual({ duplicate: true }); // completed jobs are kept
    expect((await boss.getJobById('basic', jobIdFor('wdl_10:20')))?.state).toBe('completed');
    expect(await first.deadLetters()).toEqual([]);
  });

  it('enqueues inside the caller’s transaction: nothing on rollback, the job on commit', async () => {
    const queue = open('in-transaction');
    const job = queued();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      expect(await queue.enqueue(job, { db: client })).toEqual({ duplicate: false });
      await client.query('ROLLBACK');
      expect(await boss.getJobById('in-transaction', jobIdFor(job.delivery.deliveryId))).toBeNull();
      await client.query('BEGIN');
      expect(await queue.enqueue(job, { db: client })).toEqual({ duplicate: false });
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await queue.enqueue(job)).toEqual({ duplicate: true });
  });

  it('dead-letters a "dead" result at once, and replays one or all of them with fresh tries', async () => {
    const queue = open('dead');
    const jobs = [queued(), queued(), queued()];
    for (const job of jobs) await queue.enqueue(job);
    let verdict: JobResult = { status: 'dead', reason: 'PermanentFailure: unknown message' };
    const runs: { id: string; attempt: number; maxAttempts: number }[] = [];
    const worker = queue.work(
      async ({ payload, attempt, maxAttempts }) => {
        runs.push({ id: (payload as QueuedDelivery).delivery.deliveryId, attempt, maxAttempts });
        return verdict;
      },
      { concurrency: 3 },
    );
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(3), { timeout: 10_000, interval: 50 });
    expect(runs).toHaveLength(3); // no retry of a dead result
    expect(await queue.deadLetters({ limit: 2 })).toHaveLength(2);
    expect((await queue.deadLetters())[0]).toMatchObject({ attempts: 1, lastError: 'PermanentFailure: unknown message' });

    verdict = { status: 'done' };
    const [one, ...rest] = jobs.map((job) => job.delivery.deliveryId) as [string, ...string[]];
    expect(await queue.replay(one)).toBe(true);
    expect(await queue.replay(one)).toBe(false); // no longer a dead letter
    expect(await queue.replay('wdl_never_enqueued')).toBe(false);
    expect(await queue.replayAll()).toBe(2);
    await vi.waitFor(() => expect(runs).toHaveLength(6), { timeout: 10_000, interval: 50 });
    await worker.close();
    expect(await queue.deadLetters()).toEqual([]);
    expect(await queue.replayAll()).toBe(0);
    // A replayed job starts over with every try.
    expect(
      runs
        .slice(3)
        .map(({ id, attempt, maxAttempts }) => [id, attempt, maxAttempts])
        .sort(),
    ).toEqual([one, ...rest].map((id) => [id, 1, 3]).sort());
  });

  it('lists a job with a corrupt payload, with the reason the processor gave', async () => {
    const queue = open('corrupt');
    await queue.enqueue(queued()); // creates the queue
    const id = await boss.send('corrupt', { not: 'a delivery' });
    const worker = queue.work(
      async ({ payload }) => {
        const ok = typeof (payload as QueuedDelivery).delivery === 'object';
        return ok ? { status: 'done' } : { status: 'dead', reason: `corrupt payload: ${JSON.stringify(payload)}` };
      },
      { concurrency: 1 },
    );
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await worker.close();
    expect((await queue.deadLetters())[0]).toMatchObject({
      deliveryId: id,
      event: 'unknown',
      lastError: 'corrupt payload: {"not":"a delivery"}',
    });
  });

  it('stores payloads as jsonb: PostgreSQL refuses a job whose data is not JSON', async () => {
    const queue = open('not-json');
    const job = queued();
    await queue.enqueue(job);
    const id = jobIdFor(job.delivery.deliveryId);
    await expect(
      pool.query(`UPDATE ${schema}.job SET data = $1::jsonb WHERE id = $2`, ['{"delivery":{"deliveryId":', id]),
    ).rejects.toMatchObject({
      code: '22P02', // invalid_text_representation
    });
    await expect(boss.send('not-json', '{"delivery":' as unknown as object)).rejects.toMatchObject({ code: '22P02' });
  });

  it('dead-letters payloads of the wrong shape with their reason, each listed so that replay finds it', async () => {
    const queue = open('wrong-shape');
    await queue.enqueue(queued()); // creates the queue
    // What pg-boss hands a worker for data that parsed but is no delivery: a string, a number, an
    // array, an object without the fields; and one under a delivery's own (scoped) job id.
    const shapes: unknown[] = ['not a delivery', 42, [1, 2], { delivery: {} }];
    const ids: string[] = [];
    // pg passes a string parameter as it is and turns an array into a PostgreSQL array literal, so a
    // top-level string or array goes as its JSON text; jsonb then reads it back as JSON.
    for (const data of shapes) {
      const sent = typeof data === 'string' || Array.isArray(data) ? JSON.stringify(data) : data;
      ids.push((await boss.send('wrong-shape', sent as object)) as string);
    }
    const scopedId = jobIdFor('acme:wdl_partial');
    await boss.send('wrong-shape', { delivery: { deliveryId: 'wdl_partial' }, scope: 'acme:' }, { id: scopedId });
    const seen: unknown[] = [];
    const worker = queue.work(
      async ({ payload }) => {
        seen.push(payload);
        const problem = shapeProblem(payload);
        return problem === undefined ? { status: 'done' } : { status: 'dead', reason: `corrupt job: ${problem}` };
      },
      { concurrency: 2 },
    );
    try {
      await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(5), { timeout: 10_000, interval: 50 });
      const letters = await queue.deadLetters();
      expect(seen).toEqual(expect.arrayContaining(shapes));
      for (const [index, id] of ids.entries()) {
        expect(letters.find((letter) => letter.deliveryId === id)).toMatchObject({
          event: 'unknown',
          attempts: 1,
          lastError: `corrupt job: ${shapeProblem(shapes[index])}`,
        });
      }
      const partial = letters.find((letter) => letter.deliveryId === 'wdl_partial');
      expect(partial).toMatchObject({ scope: 'acme:', lastError: 'corrupt job: the queued delivery has no event' });
      // Each as listed: by its job id, or by its scope and deliveryId.
      for (const letter of letters) expect(await queue.replay(letter)).toBe(true);
      await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(5), { timeout: 10_000, interval: 50 });
    } finally {
      await worker.close();
    }
  });

  it('puts a waiting job back as not started, with its retry count kept', async () => {
    const queue = open('wait-row');
    const job = queued();
    await queue.enqueue(job);
    const id = jobIdFor(job.delivery.deliveryId);
    let runs = 0;
    const worker = queue.work(
      async ({ attempt }) => {
        runs++;
        if (runs === 1) throw new Error('downstream down'); // one try spent: retry_count 1
        expect(attempt).toBe(2);
        return { status: 'wait', delayMs: 60_000, reason: 'resource busy' };
      },
      { concurrency: 1 },
    );
    try {
      await vi.waitFor(() => expect(runs).toBe(2), { timeout: 10_000, interval: 20 });
      await vi.waitFor(async () => expect((await row(id)).state).toBe('retry'), { timeout: 10_000, interval: 20 });
    } finally {
      await worker.close();
    }
    const waiting = await row(id);
    expect(waiting).toMatchObject({ state: 'retry', retry_count: 1, started_on: null });
    expect(waiting.due_in_s).toBeGreaterThan(30);
  });

  it('gives a replayed old dead letter the time pg-boss keeps a job, so maintenance does not archive it unrun', async () => {
    const queue = open('old-letter');
    const job = queued();
    await queue.enqueue(job);
    const worker = queue.work(async () => ({ status: 'dead', reason: 'PermanentFailure: unknown message' }), { concurrency: 1 });
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await worker.close();
    const id = jobIdFor(job.delivery.deliveryId);
    // Sent 20 days ago and kept 14 days by default: its keep_until has passed.
    await pool.query(
      `UPDATE ${schema}.job SET created_on = now() - interval '20 days', keep_until = now() - interval '6 days' WHERE id = $1`,
      [id],
    );
    expect(await queue.replay(job.delivery.deliveryId)).toBe(true);
    const replayed = await row(id);
    expect(replayed.state).toBe('created');
    expect(replayed.kept_for_s).toBeGreaterThan(13 * 86_400);
  });

  it('close() lets the running job finish and records it before resolving', async () => {
    const queue = open('close');
    const job = queued();
    await queue.enqueue(job);
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const order: string[] = [];
    const worker = queue.work(
      async () => {
        started();
        await gate;
        order.push('job finished');
        return { status: 'done' };
      },
      { concurrency: 1 },
    );
    await running;
    const closed = worker.close().then(() => order.push('closed'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    finish();
    await closed;
    expect(order).toEqual(['job finished', 'closed']);
    expect((await boss.getJobById('close', jobIdFor(job.delivery.deliveryId)))?.state).toBe('completed');
  });

  it('creates a new queue from several processes at once (pg-boss alone can deadlock there)', async () => {
    const others = Array.from({ length: 3 }, () =>
      pgBossQueue({
        connectionString: DATABASE_URL,
        name: 'created-at-once',
        bossOptions: { schema, supervise: false, schedule: false, max: 2 },
        ...fast,
      }),
    );
    try {
      const results = await Promise.all(others.map((queue) => queue.enqueue(queued('wdl_same_for_all'))));
      expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
    } finally {
      await Promise.all(others.map((queue) => queue.close()));
    }
  });

  it('rejects an enqueue when PostgreSQL is unreachable, and can be closed', async () => {
    const queue = pgBossQueue({ connectionString: 'postgres://postgres@127.0.0.1:1/test', commandTimeoutMs: 2_000, onError: () => {} });
    await expect(queue.enqueue(queued())).rejects.toThrow();
    await queue.close();
  });
});
