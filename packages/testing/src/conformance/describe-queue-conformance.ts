import { randomUUID } from 'node:crypto';
import { createReceiver, memoryStore, PermanentFailure } from '@hookline/core';
import type { DeliveryQueue, JobResult, QueuedDelivery, QueueJob, QueueWorker } from '@hookline/core/adapter';
import { afterEach, describe, expect, it } from 'vitest';

/** What the suite asks the factory for: each backend maps it onto its own options. */
export interface QueueSettings {
  /** Tries per job, the first included, before it is dead-lettered. */
  attempts: number;
  /** The delay before a retry (fixed, or the first of an exponential backoff): the backend may round it up. */
  retryDelayMs: number;
}

/** One queue under test, as the factory of `describeQueueConformance` returns it. */
export interface QueueUnderTest {
  /** A queue of its own (a fresh name): the suite expects to see only the jobs it adds. */
  queue: DeliveryQueue;
  /**
   * Stores a job for `deliveryId` that no worker can trust, the way the backend could hold one: a
   * payload that is not JSON where it stores text, or JSON that is not a queued delivery.
   */
  addCorruptJob(deliveryId: string): Promise<void>;
  /** Called after the test: close the connections, remove the queue's keys or rows. */
  cleanup?: () => unknown;
}

/** Options of `describeQueueConformance()`. */
export interface QueueConformanceOptions {
  /**
   * How long the suite waits for a job to reach the state it expects (a remote backend polls).
   * @default 10_000
   */
  timeoutMs?: number;
}

const SETTINGS: QueueSettings = { attempts: 3, retryDelayMs: 200 };
const SECRET = 'whsec_queue_conformance';

/** A queued delivery as a receiver hands it to `enqueue`, with a fresh deliveryId. */
function queuedDelivery(fields: Partial<QueuedDelivery> = {}, data: Record<string, unknown> = {}): QueuedDelivery {
  return {
    delivery: {
      event: 'line.status_changed',
      deliveryId: `wdl_conformance${randomUUID().replaceAll('-', '')}`,
      timestamp: new Date().toISOString(),
      data: { lineId: 'lin_conformance', ...data },
    },
    receivedAt: Date.now(),
    secretIndex: 0,
    ...fields,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The conformance suite every queue backend of answer-fast mode passes (the `DeliveryQueue` contract in
 * `@hookline/core`): `@hookline/bullmq`, `@hookline/pg-boss`, `memoryQueue()` from this package, and
 * yours. Call it at the top level of a vitest file; `factory` is called once per test with the
 * attempts and retry delay that test needs, and must give a queue of its own.
 *
 * It checks the contract on its own (`queue.work()` with processors of its own) and under a real
 * receiver (`receiver.work()`): enqueue is idempotent per scoped delivery and revives a dead letter; a
 * job runs once per success; a failure retries with backoff, then dead-letters; a job its processor
 * calls dead (a `PermanentFailure`) or a corrupt one is dead-lettered at once; a wait spends no try;
 * a handler past `maxRunMs` fails its job and frees its slot; `close()` resolves within its bound
 * with a hung handler, and the job runs again elsewhere; dead letters carry their scope and
 * `replay()` takes what `deadLetters()` listed; the trace context survives the trip.
 *
 * @example
 * import { memoryQueue } from '@hookline/testing';
 * import { describeQueueConformance } from '@hookline/testing/conformance';
 *
 * describeQueueConformance('memoryQueue', ({ attempts, retryDelayMs }) => {
 *   const queue = memoryQueue({ attempts, backoff: { type: 'fixed', delayMs: retryDelayMs } });
 *   return { queue, addCorruptJob: async (id) => queue.addRaw(id, 'not json') };
 * });
 */
export function describeQueueConformance(
  name: string,
  factory: (settings: QueueSettings) => QueueUnderTest | Promise<QueueUnderTest>,
  options: QueueConformanceOptions = {},
): void {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const testTimeoutMs = timeoutMs * 3 + 10_000;
  const opened: (() => unknown)[] = [];

  async function subject(settings: Partial<QueueSettings> = {}): Promise<QueueUnderTest> {
    const made = await factory({ ...SETTINGS, ...settings });
    opened.push(async () => {
      await made.cleanup?.();
    });
    return made;
  }

  /** `queue.work()`, closed after the test even if it fails. */
  function work(queue: DeliveryQueue, process: (job: QueueJob) => Promise<JobResult>, concurrency = 1): QueueWorker {
    const worker = queue.work(process, { concurrency });
    opened.push(() => worker.close());
    return worker;
  }

  /** Polls `check` until it holds, or fails naming `what`. */
  async function eventually(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${name}: ${what} did not happen within ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  async function deadLetterOf(queue: DeliveryQueue, deliveryId: string) {
    return (await queue.deadLetters({ limit: 1000 })).filter((letter) => letter.deliveryId === deliveryId);
  }

  afterEach(async () => {
    // Workers before queues: the last opened is closed first.
    for (const close of opened.splice(0).reverse()) await close();
  });

  describe(`${name} (queue conformance)`, () => {
    it('adds one job per scoped delivery: a second enqueue is a duplicate, another tenant scope another job', {
      timeout: testTimeoutMs,
    }, async () => {
      const { queue } = await subject();
      const job = queuedDelivery();
      const tenants = { ...job, scope: 'tenant-a:' };
      expect(await queue.enqueue(job)).toEqual({ duplicate: false });
      expect(await queue.enqueue(job)).toEqual({ duplicate: true });
      expect(await queue.enqueue(tenants)).toEqual({ duplicate: false });
      const runs: (string | undefined)[] = [];
      work(queue, async ({ payload }) => {
        runs.push((payload as QueuedDelivery).scope);
        return { status: 'done' };
      });
      await eventually('two runs', () => runs.length === 2);
      await sleep(300);
      expect(runs.sort()).toEqual(['tenant-a:', undefined]);
    });

    it('runs a job once when it succeeds; enqueueing it again afterwards is a duplicate and runs nothing', {
      timeout: testTimeoutMs,
    }, async () => {
      const { queue } = await subject();
      const job = queuedDelivery();
      let runs = 0;
      work(queue, async () => {
        runs += 1;
        return { status: 'done' };
      });
      await queue.enqueue(job);
      await eventually('the run', () => runs === 1);
      expect(await queue.enqueue(job)).toEqual({ duplicate: true });
      await sleep(300);
      expect(runs).toBe(1);
    });

    it('retries a failed try after its delay, counting tries, then dead-letters it with the last error', {
      timeout: testTimeoutMs,
    }, async () => {
      const { queue } = await subject({ attempts: 3, retryDelayMs: 200 });
      const job = queuedDelivery();
      const tries: [attempt: number, at: number][] = [];
      work(queue, async ({ attempt, maxAttempts }) => {
        tries.push([attempt, Date.now()]);
        expect(maxAttempts).toBe(3);
        throw new Error(`try ${attempt} failed`);
      });
      await queue.enqueue(job);
      await eventually('the dead letter', async () => (await deadLetterOf(queue, job.delivery.deliveryId)).length === 1);
      expect(tries.map(([attempt]) => attempt)).toEqual([1, 2, 3]);
      for (let i = 1; i < tries.length; i++) expect((tries[i]?.[1] as number) - (tries[i - 1]?.[1] as number)).toBeGreaterThanOrEqual(150);
      const [letter] = await deadLetterOf(queue, job.delivery.deliveryId);
      expect(letter).toMatchObject({
        deliveryId: job.delivery.deliveryId,
        event: 'line.status_changed',
        attempts: 3,
        lastError: 'try 3 failed',
      });
      expect(letter?.scope).toBeUndefined();
      expect(letter?.failedAt).toBeInstanceOf(Date);
    });

    it('dead-letters at once a job whose handler throws PermanentFailure, with its message', { timeout: testTimeoutMs }, async () => {
      const { queue } = await subject({ attempts: 5 });
      const receiver = createReceiver({ secret: SECRET, queue, store: memoryStore() });
      let runs = 0;
      receiver.on('*', () => {
        runs += 1;
        throw new PermanentFailure('unknown line');
      });
      const worker = receiver.work();
      opened.push(() => worker.close());
      const job = queuedDelivery();
      await queue.enqueue(job);
      await eventually('the dead letter', async () => (await deadLetterOf(queue, job.delivery.deliveryId)).length === 1);
      const [letter] = await deadLetterOf(queue, job.delivery.deliveryId);
      expect(letter).toMatchObject({ attempts: 1, lastError: 'PermanentFailure: unknown line' });
      expect(runs).toBe(1);
    });

    it('dead-letters a corrupt job at once, naming it corrupt, and runs no handler', { timeout: testTimeoutMs }, async () => {
      const { queue, addCorruptJob } = await subject({ attempts: 5 });
      const receiver = createReceiver({ secret: SECRET, queue, store: memoryStore() });
      let runs = 0;
      receiver.on('*', () => {
        runs += 1;
      });
      const worker = receiver.work();
      opened.push(() => worker.close());
      const deliveryId = `wdl_corrupt${randomUUID().replaceAll('-', '')}`;
      await addCorruptJob(deliveryId);
      await eventually('the dead letter', async () => (await deadLetterOf(queue, deliveryId)).length === 1);
      const [letter] = await deadLetterOf(queue, deliveryId);
      expect(letter?.lastError).toMatch(/corrupt/i);
      expect(runs).toBe(0);
    });

    it('runs a job that waits again later without spending a try, however often it waits', { timeout: testTimeoutMs }, async () => {
      const { queue } = await subject({ attempts: 2 });
      const job = queuedDelivery();
      const attempts: number[] = [];
      work(queue, async ({ attempt }) => {
        attempts.push(attempt);
        return attempts.length <= 5 ? { status: 'wait', delayMs: 50, reason: 'resource_busy' } : { status: 'done' };
      });
      await queue.enqueue(job);
      await eventually('six runs', () => attempts.length === 6);
      expect(attempts).toEqual([1, 1, 1, 1, 1, 1]);
      await sleep(200);
      expect(await deadLetterOf(queue, job.delivery.deliveryId)).toEqual([]);
    });

    it('keeps jobs of one busy resource waiting, not failing: 12 deliveries at concurrency 4 all handled once, none dead', {
      timeout: testTimeoutMs * 2,
    }, async () => {
      const { queue } = await subject({ attempts: 2 });
      const receiver = createReceiver({ secret: SECRET, queue, store: memoryStore() });
      const handled: string[] = [];
      let running = 0;
      let overlap = false;
      receiver.on(
        'line.status_changed',
        async (delivery) => {
          running += 1;
          overlap ||= running > 1;
          await sleep(30);
          running -= 1;
          handled.push(delivery.deliveryId);
        },
        { name: 'status', order: { key: (d) => String(d.data.lineId), stale: 'run' } },
      );
      const worker = receiver.work({ concurrency: 4 });
      opened.push(() => worker.close());
      const jobs = Array.from({ length: 12 }, () => queuedDelivery());
      for (const job of jobs) await queue.enqueue(job);
      await eventually('12 handled', () => handled.length === 12);
      expect(new Set(handled).size).toBe(12);
      expect(overlap).toBe(false);
      expect(await queue.deadLetters({ limit: 1000 })).toEqual([]);
    });

    it('fails a job whose handler runs past maxRunMs and frees its slot; the retry runs it once its lease lapsed', {
      timeout: testTimeoutMs * 2,
    }, async () => {
      const { queue } = await subject({ attempts: 4 });
      const receiver = createReceiver({ secret: SECRET, queue, store: memoryStore(), leaseMs: 600, maxRunMs: 900 }).onError(() => {});
      const runs: [deliveryId: string, attempt: number][] = [];
      const hung = queuedDelivery();
      receiver.on('*', (delivery, context) => {
        runs.push([delivery.deliveryId, context.attempt]);
        if (delivery.deliveryId === hung.delivery.deliveryId && runs.length === 1) return new Promise<void>(() => {});
      });
      const worker = receiver.work({ concurrency: 1 });
      opened.push(() => worker.close());
      await queue.enqueue(hung);
      await eventually('the hung run', () => runs.length === 1);
      const next = queuedDelivery();
      await queue.enqueue(next);
      await eventually('the other job, in the freed slot', () => runs.some(([id]) => id === next.delivery.deliveryId));
      await eventually('the hung job, run again', () => runs.filter(([id]) => id === hung.delivery.deliveryId).length === 2);
      expect(await deadLetterOf(queue, hung.delivery.deliveryId)).toEqual([]);
    });

    it('resolves close() within closeTimeoutMs with a hung handler; the job runs again elsewhere, its try not spent', {
      timeout: testTimeoutMs * 2,
    }, async () => {
      const { queue } = await subject({ attempts: 1 });
      const store = memoryStore();
      // maxRunMs stands in for this process's exit: the hung handler's lease lapses after it.
      const first = createReceiver({ secret: SECRET, queue, store, leaseMs: 500, maxRunMs: 1_000 }).onError(() => {});
      let started = false;
      first.on('*', () => {
        started = true;
        return new Promise<void>(() => {});
      });
      const worker = first.work({ closeTimeoutMs: 300 });
      const job = queuedDelivery();
      await queue.enqueue(job);
      await eventually('the hung run', () => started);
      const closingAt = Date.now();
      await worker.close();
      expect(Date.now() - closingAt).toBeLessThan(300 + timeoutMs);

      // Another process takes over (here: another receiver on the same store) once the lease lapsed:
      // until then the handler still runs here, and its heartbeat keeps the job from running twice.
      const second = createReceiver({ secret: SECRET, queue, store, leaseMs: 500 });
      const attempts: number[] = [];
      second.on('*', () => void attempts.push(1));
      const other = second.work();
      opened.push(() => other.close());
      await eventually('the run elsewhere', () => attempts.length === 1);
      expect(await deadLetterOf(queue, job.delivery.deliveryId)).toEqual([]);
    });

    it("lists each tenant's dead letter of one deliveryId with its scope, and replays exactly the one listed", {
      timeout: testTimeoutMs,
    }, async () => {
      const { queue } = await subject({ attempts: 1 });
      const job = queuedDelivery();
      const ofA = { ...job, scope: 'tenant-a:' };
      const ofB = { ...job, scope: 'tenant-b:' };
      const runs: (string | undefined)[] = [];
      work(queue, async ({ payload }) => {
        runs.push((payload as QueuedDelivery).scope);
        return runs.length <= 2 ? { status: 'dead', reason: 'cannot succeed' } : { status: 'done' };
      });
      await queue.enqueue(ofA);
      await queue.enqueue(ofB);
      await eventually('two dead letters', async () => (await deadLetterOf(queue, job.delivery.deliveryId)).length === 2);
      const letters = await deadLetterOf(queue, job.delivery.deliveryId);
      expect(letters.map((letter) => letter.scope).sort()).toEqual(['tenant-a:', 'tenant-b:']);

      expect(await queue.replay(job.delivery.deliveryId)).toBe(false); // no scope: neither tenant's
      const listedB = letters.find((letter) => letter.scope === 'tenant-b:');
      expect(await queue.replay(listedB as NonNullable<typeof listedB>)).toBe(true);
      await eventually("tenant b's run", () => runs.length === 3);
      expect(runs[2]).toBe('tenant-b:');
      expect((await deadLetterOf(queue, job.delivery.deliveryId)).map((letter) => letter.scope)).toEqual(['tenant-a:']);
      expect(await queue.replay(listedB as NonNullable<typeof listedB>)).toBe(false); // not a dead letter any more
    });

    it('puts a dead letter back when its delivery is enqueued again: not a duplicate, a fresh set of tries', {
      timeout: testTimeoutMs,
    }, async () => {
      const { queue } = await subject({ attempts: 2 });
      const job = queuedDelivery();
      const attempts: number[] = [];
      work(queue, async ({ attempt }) => {
        attempts.push(attempt);
        if (attempts.length <= 2) throw new Error('down');
        return { status: 'done' };
      });
      await queue.enqueue(job);
      await eventually('the dead letter', async () => (await deadLetterOf(queue, job.delivery.deliveryId)).length === 1);
      expect(await queue.enqueue(job)).toEqual({ duplicate: false });
      await eventually('the run after revival', () => attempts.length === 3);
      expect(attempts).toEqual([1, 2, 1]);
      expect(await deadLetterOf(queue, job.delivery.deliveryId)).toEqual([]);
      expect(await queue.enqueue(job)).toEqual({ duplicate: true });
    });

    it('hands the worker the trace context the job was enqueued with', { timeout: testTimeoutMs }, async () => {
      const { queue } = await subject();
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const job = queuedDelivery({ traceparent, tracestate: 'vendor=1' });
      const seen: unknown[] = [];
      work(queue, async ({ payload }) => {
        seen.push(payload);
        return { status: 'done' };
      });
      await queue.enqueue(job);
      await eventually('the run', () => seen.length === 1);
      expect(seen[0]).toMatchObject({ traceparent, tracestate: 'vendor=1', delivery: job.delivery, secretIndex: 0 });
    });

    it('takes no job once close() resolved; the job waits for the next worker', { timeout: testTimeoutMs }, async () => {
      const { queue } = await subject();
      let runs = 0;
      const worker = queue.work(
        async () => {
          runs += 1;
          return { status: 'done' };
        },
        { concurrency: 1 },
      );
      await worker.close();
      const job = queuedDelivery();
      await queue.enqueue(job);
      await sleep(500);
      expect(runs).toBe(0);
      let later = 0;
      work(queue, async () => {
        later += 1;
        return { status: 'done' };
      });
      await eventually('the run by the next worker', () => later === 1);
    });
  });
}
