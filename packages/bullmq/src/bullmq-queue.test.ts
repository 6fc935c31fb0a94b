import { randomUUID } from 'node:crypto';
import { createReceiver } from '@hookline/core';
import {
  type DeadLetter,
  type JobResult,
  type QueuedDelivery,
  type QueueJob,
  scopedDeliveryId,
  splitScopedId,
  tenantScope,
} from '@hookline/core/adapter';
import { createDelivery, requireServer, sign } from '@hookline/testing';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { bullmqQueue } from './bullmq-queue';
import { deliveryIdOf, jobIdFor } from './job-id';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const server = await requireServer('Redis', REDIS_URL);
const { hostname, port } = new URL(REDIS_URL);
const connection = { host: hostname, port: Number(port || 6379), maxRetriesPerRequest: null };
// Every queue of this run has its own name; afterAll obliterates them.
const run = `hookline-test-${randomUUID().slice(0, 8)}`;
const opened: ReturnType<typeof bullmqQueue>[] = [];
// For reading and writing job hashes as another client would.
const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

function open(suffix: string, extra: Partial<Parameters<typeof bullmqQueue>[0]> = {}) {
  const queue = bullmqQueue({
    connection,
    name: `${run}-${suffix}`,
    attempts: 3,
    backoff: { type: 'fixed', delayMs: 10 },
    worker: { drainDelay: 1 },
    onError: () => {},
    ...extra,
  });
  opened.push(queue);
  return queue;
}

function queued(deliveryId?: string, extra: Partial<QueuedDelivery> = {}): QueuedDelivery {
  const delivery = createDelivery('message.delivered', { messageId: 'msg_é✓' }, deliveryId === undefined ? {} : { deliveryId });
  return { delivery, receivedAt: Date.now(), secretIndex: 0, ...extra };
}

afterAll(async () => {
  for (const queue of opened) {
    await queue.queue.obliterate({ force: true }).catch(() => {});
    await queue.close().catch(() => {});
  }
  redis.disconnect();
});

describe('job ids', () => {
  it('never contain ":" nor are all digits, and give the deliveryId back', () => {
    for (const id of ['wdl_abc', 'wdl_1:2:3', '12345', '', 'wdl_é✓/+=']) {
      const jobId = jobIdFor(id);
      expect(jobId).not.toContain(':');
      expect(jobId).not.toMatch(/^\d+$/);
      expect(deliveryIdOf(jobId)).toBe(id);
    }
    expect(deliveryIdOf('42')).toBeUndefined();
    expect(deliveryIdOf(undefined)).toBeUndefined();
  });
});

describe('dead letters of a corrupt job', () => {
  it('name the scope and deliveryId a jobId gives back, whatever either holds, and replay joins them again', () => {
    for (const [tenant, deliveryId] of [
      [undefined, 'wdl_abc'],
      ['acme', 'wdl_abc'],
      ['eu:acme', 'wdl_abc'],
      ['acme:wdl_x', 'wdl_e1'],
      ['acme', 'wdl_x:wdl_e1'],
      [undefined, 'wdl_x:wdl_e1'],
    ] as const) {
      const scope = tenant === undefined ? undefined : tenantScope(tenant);
      const jobId = jobIdFor(scopedDeliveryId(scope === undefined ? deliveryId : { deliveryId, scope }));
      expect(splitScopedId(deliveryIdOf(jobId) as string)).toEqual(scope === undefined ? { deliveryId } : { deliveryId, scope });
    }
  });
});

describe('bullmqQueue options', () => {
  it("counts stalls with `maxStalls`, and refuses BullMQ's own `worker.maxStalledCount` naming it", () => {
    const worker = { maxStalledCount: 1 } as never;
    expect(() => bullmqQueue({ connection, worker })).toThrow(new TypeError('bullmqQueue: `worker.maxStalledCount` is now `maxStalls`'));
    for (const maxStalls of [-1, 1.5, Number.NaN]) expect(() => bullmqQueue({ connection, maxStalls })).toThrow(/maxStalls/);
  });
});

describe.skipIf(!server.reachable)('bullmqQueue', () => {
  it('enqueues once per deliveryId, keeps the payload and trace context, and hands it to a worker', async () => {
    const queue = open('basic');
    const job = queued('wdl_10:20', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=x' });
    expect(await queue.enqueue(job)).toEqual({ duplicate: false });
    expect(await queue.enqueue({ ...job, receivedAt: job.receivedAt + 5 })).toEqual({ duplicate: true });
    expect(await queue.enqueue(queued('123456'))).toEqual({ duplicate: false });
    expect(await queue.queue.getJobCounts('wait')).toEqual({ wait: 2 });

    const seen: QueueJob[] = [];
    const worker = queue.work(
      async (got) => {
        seen.push(got);
        return { status: 'done' };
      },
      { concurrency: 2 },
    );
    await vi.waitFor(() => expect(seen).toHaveLength(2), { timeout: 10_000 });
    await worker.close();
    const first = seen.find((got) => (got.payload as QueuedDelivery).delivery.deliveryId === 'wdl_10:20');
    expect(first).toEqual({ payload: JSON.parse(JSON.stringify(job)), attempt: 1, maxAttempts: 3 });
    // Completed jobs are kept, so the deliveryId is still a duplicate after the work is done.
    expect(await queue.enqueue(job)).toEqual({ duplicate: true });
    expect(await queue.deadLetters()).toEqual([]);
  });

  it('writes a burst of enqueues together, each with its own answer', async () => {
    const queue = open('burst');
    const known = queued();
    await queue.enqueue(known);
    const fresh = Array.from({ length: 30 }, () => queued());
    const waiting: string[] = [];
    queue.queue.on('waiting', (job) => waiting.push(String(job.id)));
    // One event-loop turn: the known delivery again, 30 new ones, and the first new one twice.
    const answers = await Promise.all([known, ...fresh, fresh[0] as QueuedDelivery].map((job) => queue.enqueue(job)));
    expect(answers[0]).toEqual({ duplicate: true });
    expect(answers.slice(1, 31)).toEqual(fresh.map(() => ({ duplicate: false })));
    expect(answers[31]).toEqual({ duplicate: true });
    expect(await queue.queue.getJobCounts('wait')).toEqual({ wait: 31 });
    expect(waiting).toHaveLength(31);
    const stored = await queue.queue.getJob(jobIdFor((fresh[5] as QueuedDelivery).delivery.deliveryId));
    expect(stored?.data).toEqual(JSON.parse(JSON.stringify(fresh[5])));
    expect(stored?.opts).toMatchObject({ attempts: 3, backoff: { type: 'fixed', delay: 10 } });
  });

  it('stores the job Queue.add would store for the same delivery and options', async () => {
    const queue = open('as-add');
    const job = queued();
    await queue.enqueue(job);
    await queue.queue.add(job.delivery.event, job, { jobId: 'reference' });
    const ours = await queue.queue.getJob(jobIdFor(job.delivery.deliveryId));
    const reference = await queue.queue.getJob('reference');
    if (ours === undefined || reference === undefined) throw new Error('a job is missing');
    // Everything but the id and the time of the add: name, data, options, counters, state.
    const comparable = (stored: typeof ours) => {
      const { id, timestamp, opts, ...rest } = stored.asJSON();
      return { ...rest, opts: { ...(opts as object), jobId: undefined }, timestamp: typeof timestamp };
    };
    expect(comparable(ours)).toEqual(comparable(reference));
    expect(ours.opts).toMatchObject({ jobId: jobIdFor(job.delivery.deliveryId), attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    expect(Math.abs(ours.timestamp - Date.now())).toBeLessThan(60_000);
    expect(await ours.getState()).toBe(await reference.getState());
  });

  it("stores a delivery the receiver queued as the verified body's own text, which reads back as the job", async () => {
    const queue = open('body-text');
    const secret = 'whsec_body_text';
    // Spacing and a field beyond the envelope's four, as the service may send: stored byte for byte.
    const text = JSON.stringify({ ...createDelivery('message.delivered', { messageId: 'msg_é✓' }), region: 'eu' }, null, 1);
    const { deliveryId } = JSON.parse(text) as { deliveryId: string };
    const receiver = createReceiver({ secret, queue }).on('*', () => {});
    const answer = await receiver.handle({ body: Buffer.from(text), headers: { 'x-service-signature': sign(text, secret) } });
    expect(answer.status).toBe(202);
    const client = await queue.queue.backend.client;
    const data = await client.hget(queue.queue.toKey(jobIdFor(deliveryId)), 'data');
    expect(data).toContain(`{"delivery":${text},`);
    const stored = await queue.queue.getJob(jobIdFor(deliveryId));
    expect(stored?.data).toEqual({ delivery: JSON.parse(text), receivedAt: expect.any(Number), secretIndex: 0 });
  });

  it('rejects every enqueue of a burst when Redis is unreachable', async () => {
    const queue = bullmqQueue({
      connection: { host: '127.0.0.1', port: 1, maxRetriesPerRequest: null, retryStrategy: () => 1_000 },
      name: `${run}-burst-down`,
      commandTimeoutMs: 300,
      onError: () => {},
    });
    const results = await Promise.allSettled([queued(), queued(), queued()].map((job) => queue.enqueue(job)));
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    await queue.close().catch(() => {});
  });

  it('dead-letters a "dead" result at once, and replays one or all of them', async () => {
    const queue = open('dead');
    const jobs = [queued(), queued(), queued()];
    for (const job of jobs) await queue.enqueue(job);
    let verdict: JobResult = { status: 'dead', reason: 'PermanentFailure: unknown message' };
    const runs: string[] = [];
    const worker = queue.work(
      async ({ payload }) => {
        runs.push((payload as QueuedDelivery).delivery.deliveryId);
        return verdict;
      },
      { concurrency: 3 },
    );
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(3), { timeout: 10_000, interval: 50 });
    expect(runs).toHaveLength(3); // no retry of a dead result
    const dead = await queue.deadLetters({ limit: 2 });
    expect(dead).toHaveLength(2);
    expect(dead[0]).toMatchObject({ attempts: 1, lastError: 'PermanentFailure: unknown message' });

    verdict = { status: 'done' };
    const [one, ...rest] = jobs.map((job) => job.delivery.deliveryId);
    expect(await queue.replay(one as string)).toBe(true);
    expect(await queue.replay(one as string)).toBe(false); // no longer a dead letter
    expect(await queue.replay('wdl_never_enqueued')).toBe(false);
    await vi.waitFor(async () => expect((await queue.deadLetters()).map((d) => d.deliveryId).sort()).toEqual([...rest].sort()), {
      timeout: 10_000,
      interval: 50,
    });
    expect(await queue.replayAll()).toBe(2);
    await vi.waitFor(async () => expect(await queue.queue.getJobCounts('completed')).toEqual({ completed: 3 }), {
      timeout: 10_000,
      interval: 50,
    });
    expect(await queue.deadLetters()).toEqual([]);
    expect(await queue.replayAll()).toBe(0);
    await worker.close();
    // A replayed job starts over: its attempt count was reset.
    expect(runs.filter((id) => id === one)).toHaveLength(2);
  });

  it('lists a job with a corrupt payload under its deliveryId', async () => {
    const queue = open('corrupt');
    await queue.queue.add('garbage', 'not a delivery', { jobId: jobIdFor('wdl_corrupt') });
    const worker = queue.work(async ({ payload }) => ({ status: 'dead', reason: `corrupt payload: ${JSON.stringify(payload)}` }), {
      concurrency: 1,
    });
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await worker.close();
    expect((await queue.deadLetters())[0]).toMatchObject({
      deliveryId: 'wdl_corrupt',
      event: 'garbage',
      lastError: 'corrupt payload: "not a delivery"',
    });
  });

  it('dead-letters a job whose data is not JSON, with a reason that says so, instead of cycling it through stalls', async () => {
    const errors: Error[] = [];
    // A short lock and stall check: a job nobody holds comes back within a second, so a cycle shows.
    const queue = open('not-json', {
      worker: { drainDelay: 1, lockDuration: 300, stalledInterval: 300 },
      maxStalls: 1,
      onError: (error) => errors.push(error),
    });
    const unscoped = queued();
    const scoped = queued(undefined, { scope: tenantScope('acme') });
    await queue.enqueue(unscoped);
    await queue.enqueue(scoped);
    const keyOf = (job: QueuedDelivery) => queue.queue.toKey(jobIdFor(scopedDeliveryId(job)));
    for (const job of [unscoped, scoped]) await redis.hset(keyOf(job), 'data', '{"delivery":{"deliveryId":');
    const runs: unknown[] = [];
    const worker = queue.work(
      async ({ payload }) => {
        runs.push(payload);
        return { status: 'done' };
      },
      { concurrency: 1 },
    );
    try {
      await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(2), { timeout: 20_000, interval: 50 });
      const letters = await queue.deadLetters();
      const byScope = (scope: string | undefined) => letters.find((letter) => letter.scope === scope);
      // The deliveryId (and the scope) come back from the job id; the event from the job's name.
      for (const [letter, job] of [
        [byScope(undefined), unscoped],
        [byScope(tenantScope('acme')), scoped],
      ] as const) {
        expect(letter).toMatchObject({ deliveryId: job.delivery.deliveryId, event: 'message.delivered', attempts: 1 });
        expect(letter?.lastError).toMatch(/^corrupt job: its data is not JSON \(.+\)$/);
      }
      expect(runs).toEqual([]); // no processor saw a payload it could not have read
      expect(await redis.hget(keyOf(unscoped), 'stc')).toBeNull(); // never stalled
      expect(errors).toEqual([]);

      // A replay cannot mend it: it is corrupt again. The service's replay (an enqueue) brings the
      // delivery back whole, and it runs.
      expect(await queue.replay(byScope(tenantScope('acme')) as DeadLetter)).toBe(true);
      await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(2), { timeout: 20_000, interval: 50 });
      expect(await queue.enqueue(scoped)).toEqual({ duplicate: false });
      await vi.waitFor(() => expect(runs).toHaveLength(1), { timeout: 20_000, interval: 50 });
      expect(runs[0]).toEqual(JSON.parse(JSON.stringify(scoped)));
    } finally {
      await worker.close();
    }
  });

  it("moves a waiting job to the delayed set without a try: BullMQ's attemptsMade stays, its lock is dropped", async () => {
    const queue = open('wait-counters');
    const job = queued();
    await queue.enqueue(job);
    const key = queue.queue.toKey(jobIdFor(job.delivery.deliveryId));
    let runs = 0;
    const worker = queue.work(
      async () => {
        runs++;
        return { status: 'wait', delayMs: runs < 3 ? 10 : 60_000, reason: 'resource busy' };
      },
      { concurrency: 1 },
    );
    try {
      await vi.waitFor(async () => expect(await queue.queue.getJobState(jobIdFor(job.delivery.deliveryId))).toBe('delayed'), {
        timeout: 20_000,
        interval: 20,
      });
      await vi.waitFor(() => expect(runs).toBe(3), { timeout: 20_000, interval: 20 });
      await vi.waitFor(async () => expect(await queue.queue.getDelayedCount()).toBe(1), { timeout: 20_000, interval: 20 });
    } finally {
      await worker.close();
    }
    // attemptsMade (atm) is what QueueJob.attempt counts from; attemptsStarted (ats) counts every start.
    const [attemptsMade, attemptsStarted, stalled] = await redis.hmget(key, 'atm', 'ats', 'stc');
    expect(Number(attemptsMade ?? 0)).toBe(0);
    expect(Number(attemptsStarted)).toBe(3);
    expect(stalled).toBeNull();
    expect(await redis.exists(`${key}:lock`)).toBe(0);
  });

  it('replays a dead letter with its stalled count cleared and its payload kept', async () => {
    const queue = open('replay-stalled');
    const job = queued();
    await queue.enqueue(job);
    const key = queue.queue.toKey(jobIdFor(job.delivery.deliveryId));
    let worker = queue.work(async () => ({ status: 'dead', reason: 'job stalled more than allowable limit' }), { concurrency: 1 });
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await worker.close();
    await redis.hset(key, 'stc', '5'); // as BullMQ leaves a job it failed for stalling
    expect(await queue.replay(job.delivery.deliveryId)).toBe(true);
    expect(await redis.hget(key, 'stc')).toBeNull();
    const seen: unknown[] = [];
    worker = queue.work(
      async ({ payload }) => {
        seen.push(payload);
        return { status: 'done' };
      },
      { concurrency: 1 },
    );
    await vi.waitFor(() => expect(seen).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await worker.close();
    expect(seen[0]).toEqual(JSON.parse(JSON.stringify(job)));
  });

  it('stops renewing the lock of a processor that settled, and frees its slot', async () => {
    const queue = open('settled-lock', { worker: { drainDelay: 1, lockDuration: 1_000 } });
    const job = queued();
    await queue.enqueue(job);
    const key = queue.queue.toKey(jobIdFor(job.delivery.deliveryId));
    let fail!: (error: Error) => void;
    let runs = 0;
    const worker = queue.work(
      () => {
        runs++;
        if (runs > 1) return Promise.resolve({ status: 'done' as const });
        return new Promise<JobResult>((_, reject) => {
          fail = reject;
        });
      },
      { concurrency: 1 },
    );
    try {
      await vi.waitFor(() => expect(runs).toBe(1), { timeout: 10_000, interval: 20 });
      // Held past its lockDuration: renewed while the processor runs.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await redis.exists(`${key}:lock`)).toBe(1);
      expect(await queue.queue.getActiveCount()).toBe(1);
      fail(new Error('the handlers ran past maxRunMs'));
      await vi.waitFor(() => expect(runs).toBe(2), { timeout: 10_000, interval: 20 });
      await vi.waitFor(async () => expect(await queue.queue.getCompletedCount()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(await redis.exists(`${key}:lock`)).toBe(0);
    } finally {
      await worker.close();
    }
  });

  it('close() lets the running job finish first', async () => {
    const queue = open('close');
    await queue.enqueue(queued());
    let release!: () => void;
    const started = new Promise<void>((resolve) => {
      release = resolve;
    });
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const order: string[] = [];
    const worker = queue.work(
      async () => {
        release();
        await gate;
        order.push('job finished');
        return { status: 'done' };
      },
      { concurrency: 1 },
    );
    await started;
    const closed = worker.close().then(() => order.push('closed'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    finish();
    await closed;
    expect(order).toEqual(['job finished', 'closed']);
    expect(await queue.queue.getJobCounts('completed')).toEqual({ completed: 1 });
  });

  it('rejects an enqueue within commandTimeoutMs when Redis is unreachable', async () => {
    const queue = bullmqQueue({
      connection: { host: '127.0.0.1', port: 1, maxRetriesPerRequest: null, retryStrategy: () => 1_000 },
      name: `${run}-down`,
      commandTimeoutMs: 300,
      onError: () => {},
    });
    await expect(queue.enqueue(queued())).rejects.toThrow(/did not finish within 300 ms/);
    await queue.close().catch(() => {});
  });

  it('closes at once when it was never used, and refuses calls after close() instead of reconnecting', async () => {
    // Its producer side is made on first use (a worker process never enqueues): closing a queue that
    // was never used has nothing to wait for, and a call after close() is refused, not reconnected.
    const queue = bullmqQueue({ connection, name: `${run}-unused`, onError: () => {} });
    await queue.close();
    await expect(queue.enqueue(queued())).rejects.toThrow(/closed/);
    await expect(queue.deadLetters()).rejects.toThrow(/closed/);
    expect(() => queue.queue).toThrow(/closed/);
  });

  it('takes a job back after a stall, up to maxStalls times, without spending a try; one more stall dead-letters it', async () => {
    // A worker of another process takes the job and dies: its lock is never renewed.
    const abandon = async (name: string) => {
      const dying = new Worker(name, null, { connection, lockDuration: 300, autorun: false });
      const taken = await dying.getNextJob(randomUUID());
      await dying.close(true);
      return taken;
    };
    const runs: QueueJob[] = [];
    for (const maxStalls of [0, 1]) {
      const queue = open(`stalls-${maxStalls}`, { worker: { drainDelay: 1, lockDuration: 300, stalledInterval: 300 }, maxStalls });
      const job = queued();
      await queue.enqueue(job);
      expect((await abandon(queue.queue.name))?.data).toEqual(JSON.parse(JSON.stringify(job)));
      const worker = queue.work(
        async (got) => {
          runs.push(got);
          return { status: 'done' };
        },
        { concurrency: 1 },
      );
      try {
        if (maxStalls === 0) {
          await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(1), { timeout: 20_000, interval: 50 });
          expect((await queue.deadLetters())[0]).toMatchObject({
            deliveryId: job.delivery.deliveryId,
            lastError: 'job stalled more than allowable limit',
          });
          expect(runs).toEqual([]);
        } else {
          await vi.waitFor(() => expect(runs).toHaveLength(1), { timeout: 20_000, interval: 50 });
          expect(runs[0]).toMatchObject({ attempt: 1, maxAttempts: 3 });
          expect(await queue.deadLetters()).toEqual([]);
        }
      } finally {
        await worker.close();
      }
    }
  });

  it('refuses a queue name BullMQ cannot take, at once', () => {
    expect(() => bullmqQueue({ connection, name: 'a:b' })).toThrow(RangeError);
    expect(() => bullmqQueue({ connection, name: '' })).toThrow(RangeError);
  });
});
