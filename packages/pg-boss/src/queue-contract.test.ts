import { randomUUID } from 'node:crypto';
import type { DeadLetter, DeliveryQueue, JobResult, QueuedDelivery, QueueJob } from '@hookline/core/adapter';
import { createDelivery, requireServer } from '@hookline/testing';
import pg from 'pg';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type PgBossDeliveryQueue, pgBossQueue } from './pg-boss-queue';

// ---------------------------------------------------------------------------------------------------
// The queue contract (DeliveryQueue in @hookline/core), checked through enqueue, work(process),
// deadLetters, replay and close alone, with processors written here that answer done, dead or wait,
// or reject. Each check is a function of a queue factory and knows nothing of the backend: the same
// checks run against every backend (this block is the same in each backend's file).
// ---------------------------------------------------------------------------------------------------

/** A new, empty queue; each `open()` is one more handle on it (another producer or consumer process). */
interface QueueUnderTest {
  open(): DeliveryQueue;
}

/** Makes a queue under test whose jobs get 3 tries, retried within a second; the file cleans it up. */
type QueueFactory = () => QueueUnderTest;

const WAIT = { timeout: 20_000, interval: 20 } as const;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function queuedDelivery(deliveryId?: string, extra: Partial<QueuedDelivery> = {}): QueuedDelivery {
  const delivery = createDelivery('message.delivered', { messageId: 'msg_é✓' }, deliveryId === undefined ? {} : { deliveryId });
  return { delivery, receivedAt: Date.now(), secretIndex: 0, ...extra };
}

function deliveryIdIn(payload: unknown): string {
  return (payload as QueuedDelivery).delivery.deliveryId;
}

/** Rejects when `promise` has not settled within `ms`: a check waits on nothing without a bound. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Runs `body` with a worker of `queue` started on `process`, and closes the worker after it. */
async function working(
  queue: DeliveryQueue,
  process: (job: QueueJob) => Promise<JobResult>,
  concurrency: number,
  body: () => Promise<void>,
): Promise<void> {
  const worker = queue.work(process, { concurrency });
  try {
    await body();
  } finally {
    await within(worker.close(), 20_000, 'worker.close()');
  }
}

/** A delivery dead-lettered by a processor that answers `dead` (its queue has no worker afterwards). */
async function deadLettered(queue: DeliveryQueue, job: QueuedDelivery): Promise<void> {
  await queue.enqueue(job);
  await working(
    queue,
    async () => ({ status: 'dead', reason: 'PermanentFailure: unknown message' }),
    1,
    async () => {
      await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), WAIT);
    },
  );
}

const QUEUE_CHECKS: Record<string, (make: QueueFactory) => Promise<void>> = {
  async 'a job that waits runs again later without spending a try, however often it waits'(make) {
    const queue = make().open();
    const job = queuedDelivery();
    await queue.enqueue(job);
    const attempts: number[] = [];
    await working(
      queue,
      async ({ attempt }) => {
        attempts.push(attempt);
        return attempts.length <= 10 ? { status: 'wait', delayMs: 20, reason: 'resource busy' } : { status: 'done' };
      },
      1,
      async () => {
        await vi.waitFor(() => expect(attempts).toHaveLength(11), WAIT);
      },
    );
    expect(attempts).toEqual(Array.from({ length: 11 }, () => 1));
    expect(await queue.deadLetters()).toEqual([]);
    expect(await queue.enqueue(job)).toEqual({ duplicate: true }); // completed, and kept
  },

  async 'waiting never dead-letters a job: only a rejection spends a try'(make) {
    const queue = make().open();
    await queue.enqueue(queuedDelivery());
    const attempts: number[] = [];
    await working(
      queue,
      async ({ attempt, maxAttempts }) => {
        attempts.push(attempt);
        expect(maxAttempts).toBe(3);
        if (attempts.length <= 5) return { status: 'wait', delayMs: 10, reason: 'predecessor not seen yet' }; // more waits than tries
        if (attempts.length === 6) throw new Error('downstream down');
        return { status: 'done' };
      },
      1,
      async () => {
        await vi.waitFor(() => expect(attempts).toHaveLength(7), WAIT);
      },
    );
    expect(attempts).toEqual([1, 1, 1, 1, 1, 1, 2]);
    expect(await queue.deadLetters()).toEqual([]);
  },

  async 'deliveries of one busy resource wait for it, and every one is handled (20 at concurrency 10)'(make) {
    const queue = make().open();
    const jobs = Array.from({ length: 20 }, () => queuedDelivery());
    await Promise.all(jobs.map((job) => queue.enqueue(job)));
    let holder: string | undefined;
    let collisions = 0;
    const handled = new Set<string>();
    await working(
      queue,
      async ({ payload }) => {
        // What an ordering guard does with its lock: one holder at a time, the others wait and come
        // back after a jittered delay, without a try spent.
        if (holder !== undefined) {
          collisions++;
          return { status: 'wait', delayMs: 10 + Math.random() * 40, reason: 'resource_busy' };
        }
        holder = deliveryIdIn(payload);
        await sleep(50); // long enough for the others to be fetched meanwhile, even on a slow machine
        handled.add(holder);
        holder = undefined;
        return { status: 'done' };
      },
      10,
      async () => {
        await vi.waitFor(() => expect(handled.size).toBe(20), { ...WAIT, timeout: 60_000 });
      },
    );
    expect(collisions).toBeGreaterThan(0); // they did collide
    expect(await queue.deadLetters()).toEqual([]);
  },

  async "two tenants' dead letters of one deliveryId are listed with their scope and replayed one by one"(make) {
    const queue = make().open();
    const deliveryId = `wdl_${randomUUID().replace(/-/g, '')}`;
    const acme = queuedDelivery(deliveryId, { scope: 'acme:' });
    const globex = queuedDelivery(deliveryId, { scope: 'globex:' });
    expect(await queue.enqueue(acme)).toEqual({ duplicate: false });
    expect(await queue.enqueue(globex)).toEqual({ duplicate: false });
    let verdict: JobResult = { status: 'dead', reason: 'PermanentFailure: unknown message' };
    const runs: string[] = [];
    await working(
      queue,
      async ({ payload }) => {
        runs.push(`${(payload as QueuedDelivery).scope}${deliveryIdIn(payload)}`);
        return verdict;
      },
      2,
      async () => {
        await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(2), WAIT);
        const letters = (await queue.deadLetters()).sort((a, b) => String(a.scope).localeCompare(String(b.scope)));
        expect(letters.map(({ deliveryId: id, scope }) => ({ id, scope }))).toEqual([
          { id: deliveryId, scope: 'acme:' },
          { id: deliveryId, scope: 'globex:' },
        ]);
        const [acmeLetter, globexLetter] = letters as [DeadLetter, DeadLetter];
        expect(await queue.replay(deliveryId)).toBe(false); // no dead letter without a scope
        verdict = { status: 'done' };
        expect(await queue.replay(acmeLetter)).toBe(true);
        expect(await queue.replay(acmeLetter)).toBe(false); // no longer a dead letter
        await vi.waitFor(async () => expect((await queue.deadLetters()).map((letter) => letter.scope)).toEqual(['globex:']), WAIT);
        expect(await queue.replay({ deliveryId: globexLetter.deliveryId, scope: globexLetter.scope })).toBe(true);
        await vi.waitFor(() => expect(runs).toHaveLength(4), WAIT);
      },
    );
    expect(runs.sort()).toEqual([`acme:${deliveryId}`, `acme:${deliveryId}`, `globex:${deliveryId}`, `globex:${deliveryId}`]);
    expect(await queue.deadLetters()).toEqual([]);
    expect(await queue.replayAll()).toBe(0);
  },

  async 'an enqueue of a dead letter puts it back with fresh tries; of a completed job, adds nothing'(make) {
    const queue = make().open();
    const job = queuedDelivery();
    await queue.enqueue(job);
    let failing = true;
    const seen: { attempt: number; receivedAt: number }[] = [];
    const process = async ({ attempt, payload }: QueueJob): Promise<JobResult> => {
      seen.push({ attempt, receivedAt: (payload as QueuedDelivery).receivedAt });
      if (failing) throw new Error('downstream down');
      return { status: 'done' };
    };
    await working(queue, process, 1, async () => {
      await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), WAIT);
      expect((await queue.deadLetters())[0]).toMatchObject({ deliveryId: job.delivery.deliveryId, attempts: 3 });
      failing = false;
      // The service's replay of the delivery: the same deliveryId, received again.
      const again = { ...job, receivedAt: job.receivedAt + 1_000 };
      expect(await queue.enqueue(again)).toEqual({ duplicate: false });
      await vi.waitFor(() => expect(seen).toHaveLength(4), WAIT);
      expect(seen.map(({ attempt }) => attempt)).toEqual([1, 2, 3, 1]);
      expect(seen[3]?.receivedAt).toBe(again.receivedAt); // the new payload
    });
    expect(await queue.deadLetters()).toEqual([]);
    expect(await queue.enqueue(job)).toEqual({ duplicate: true });
    await working(queue, process, 1, () => sleep(500));
    expect(seen).toHaveLength(4); // nothing ran
  },

  async 'concurrent enqueues of one dead letter revive it once'(make) {
    const under = make();
    const [first, second] = [under.open(), under.open()];
    const job = queuedDelivery();
    await deadLettered(first, job);
    // Two producers, and two enqueues of one of them in the same moment.
    const answers = await Promise.all([first.enqueue(job), second.enqueue(job), first.enqueue(job), second.enqueue(job)]);
    expect(answers.filter(({ duplicate }) => !duplicate)).toHaveLength(1);
    let runs = 0;
    await working(
      first,
      async () => {
        runs++;
        return { status: 'done' };
      },
      2,
      async () => {
        await vi.waitFor(() => expect(runs).toBe(1), WAIT);
        await sleep(300);
      },
    );
    expect(runs).toBe(1);
    expect(await first.deadLetters()).toEqual([]);
  },

  async 'close() resolves once a processor that hung settles, and its job runs again without a spent try'(make) {
    const queue = make().open();
    await queue.enqueue(queuedDelivery());
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let settle!: (result: JobResult) => void;
    const attempts: number[] = [];
    const worker = queue.work(
      ({ attempt }) => {
        attempts.push(attempt);
        started();
        // Never settles by itself: what the receiver's close bound settles, as a wait.
        return new Promise<JobResult>((resolve) => {
          settle = resolve;
        });
      },
      { concurrency: 1 },
    );
    await within(running, 20_000, 'the first run');
    let closed = false;
    const closing = worker.close().then(() => {
      closed = true;
    });
    await sleep(300);
    expect(closed).toBe(false); // close() waits for the running processor
    settle({ status: 'wait', delayMs: 0, reason: 'the worker is shutting down' });
    await within(closing, 10_000, 'close() after the processor settled');
    await working(
      queue,
      async ({ attempt }) => {
        attempts.push(attempt);
        return { status: 'done' };
      },
      1,
      async () => {
        await vi.waitFor(() => expect(attempts).toHaveLength(2), WAIT);
      },
    );
    expect(attempts).toEqual([1, 1]);
    expect(await queue.deadLetters()).toEqual([]);
  },

  async 'a hung processor holds its slot until it settles; its rejection is a spent try, then the slot is free'(make) {
    const queue = make().open();
    const [hung, next] = [queuedDelivery(), queuedDelivery()];
    await queue.enqueue(hung);
    await queue.enqueue(next);
    let fail!: (error: Error) => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const runs: string[] = [];
    await working(
      queue,
      async ({ payload, attempt }) => {
        runs.push(`${deliveryIdIn(payload)}@${attempt}`);
        if (runs.length > 1) return { status: 'done' };
        started();
        // What the receiver's maxRunMs does to a handler that never returns: the processor rejects.
        return new Promise<JobResult>((_, reject) => {
          fail = reject;
        });
      },
      1,
      async () => {
        await within(running, 20_000, 'the first run');
        await sleep(300);
        expect(runs).toHaveLength(1); // one slot, and it is taken
        fail(new Error('the handlers ran past maxRunMs'));
        await vi.waitFor(() => expect(runs).toHaveLength(3), WAIT);
      },
    );
    const first = (runs[0] as string).split('@')[0] as string;
    const other = first === hung.delivery.deliveryId ? next.delivery.deliveryId : hung.delivery.deliveryId;
    expect(runs.slice(1).sort()).toEqual([`${first}@2`, `${other}@1`].sort());
    expect(await queue.deadLetters()).toEqual([]);
  },
};

// ---------------------------------------------------------------------------------------------------

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
// This file's own pg-boss schema; afterAll drops it. Every queue of the file shares one PgBoss.
const schema = `hookline_contract_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const fast = { attempts: 3, retryDelaySeconds: 0, retryBackoff: false, pollingIntervalMs: 50, onError: () => {} } as const;
let owner: PgBossDeliveryQueue;
let boss: PgBoss;
let made = 0;

const pgBoss: QueueFactory = () => {
  const name = `contract-${++made}`;
  return { open: () => pgBossQueue({ boss, name, schema, ...fast }) };
};

describe.skipIf(!server.reachable)('pgBossQueue: the queue contract', () => {
  beforeAll(async () => {
    owner = pgBossQueue({
      connectionString: DATABASE_URL,
      name: 'contract-owner',
      bossOptions: { schema, supervise: false, schedule: false, max: 6 },
      ...fast,
    });
    boss = await owner.boss();
  });
  afterAll(async () => {
    await owner?.close();
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  for (const [name, check] of Object.entries(QUEUE_CHECKS)) it(name, () => check(pgBoss));
});
