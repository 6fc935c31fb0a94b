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
const fast = { attempts: 3, retryDelaySeconds: 0, retryBackoff: false, pollingIntervalMs: 50, onError: () => {} } as const;

function queued(deliveryId?: string, extra: Partial<QueuedDelivery> = {}): QueuedDelivery {
  const delivery = createDelivery('message.delivered', { messageId: 'msg_é✓' }, deliveryId === undefined ? {} : { deliveryId });
  return { delivery, receivedAt: Date.now(), secretIndex: 1, ...extra };
}

describe('job ids', () => {
  it('are UUID v5 (the RFC 9562 example), one per deliveryId', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(jobIdFor('wdl_a')).toBe(jobIdFor('wdl_a'));
    expect(jobIdFor('wdl_a')).not.toBe(jobIdFor('wdl_b'));
    expect(jobIdFor('wdl_a')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
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

  it('retries a rejected job with its attempt count, then dead-letters it with the last error', async () => {
    const queue = open('retry');
    const job = queued();
    await queue.enqueue(job);
    const attempts: number[] = [];
    const worker = queue.work(
      async ({ attempt }) => {
        attempts.push(attempt);
        throw new Error(`downstream down (try ${attempt})`);
      },
      { concurrency: 1 },
    );
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await worker.close();
    expect(attempts).toEqual([1, 2, 3]);
    const [dead] = await queue.deadLetters();
    expect(dead).toMatchObject({
      deliveryId: job.delivery.deliveryId,
      event: 'message.delivered',
      attempts: 3,
      lastError: 'downstream down (try 3)',
    });
    expect(dead?.failedAt).toBeInstanceOf(Date);
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
