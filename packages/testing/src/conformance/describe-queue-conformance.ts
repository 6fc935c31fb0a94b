import { randomUUID } from 'node:crypto';
import { createReceiver, memoryStore, PermanentFailure } from '@hookline/core';
import {
  type DeadLetter,
  type DeliveryQueue,
  type JobResult,
  type QueuedDelivery,
  type QueueJob,
  type QueueWorker,
  tenantScope,
} from '@hookline/core/adapter';
import { afterEach, describe, expect, it } from 'vitest';
import { describeQueueLimits } from './queue-limits-cases';

/** What the suite asks the factory for: each backend maps it onto its own options. */
export interface QueueSettings {
  /** Tries per job, the first included, before it is dead-lettered. */
  attempts: number;
  /** The delay before a retry (fixed, or the first of an exponential backoff): the backend may round it up. */
  retryDelayMs: number;
  /**
   * How long the backend lets a job run before another worker may take it (a visibility timeout, a
   * lock), when a test asks for it short: the test's handlers then run past it. A backend whose worker
   * renews it while a job runs (SQS, BullMQ) sets it; one whose lock is fixed, and so must outlast the
   * receiver's `maxRunMs` (pg-boss's expiry, `memoryQueue`'s `stalledAfterMs`), or that has none
   * (Cloudflare Queues pushes batches), leaves it.
   */
  visibilityTimeoutMs?: number;
}

/** One queue under test, as the factory of `describeQueueConformance` returns it. */
export interface QueueUnderTest {
  /** A queue of its own (a fresh name): the suite expects to see only the jobs it adds. */
  queue: DeliveryQueue;
  /**
   * Another handle on the same queue, as a second process would open it (its own connections). Given,
   * the suite also checks that two producers reviving one dead letter at once revive it once.
   */
  another?: () => DeliveryQueue;
  /**
   * Stores a job for `deliveryId` that no worker can trust, the way the backend could hold one: a
   * payload that is not JSON where it stores text, or JSON that is not a queued delivery. Its dead
   * letter must be listed under `deliveryId`.
   */
  addCorruptJob(deliveryId: string): Promise<void>;
  /** Called after the test: close the connections, remove the queue's keys or rows. */
  cleanup?: () => unknown;
}

/** Options of `describeQueueConformance()`. */
export interface QueueConformanceOptions {
  /**
   * How long the suite waits for a job to reach the state it expects (a remote backend polls).
   * @default 20_000
   */
  timeoutMs?: number;
}

const SETTINGS: QueueSettings = { attempts: 3, retryDelayMs: 200 };
const SECRET = 'whsec_queue_conformance';

/** A queued delivery as a receiver hands it to `enqueue`, with a fresh deliveryId (non-ASCII data kept whole). */
function queuedDelivery(fields: Partial<QueuedDelivery> = {}, data: Record<string, unknown> = {}): QueuedDelivery {
  return {
    delivery: {
      event: 'line.status_changed',
      deliveryId: `wdl_conformance${randomUUID().replaceAll('-', '')}`,
      timestamp: new Date().toISOString(),
      data: { lineId: 'lin_conformance', note: 'é✓', ...data },
    },
    receivedAt: Date.now(),
    secretIndex: 0,
    ...fields,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const deliveryIdIn = (payload: unknown): string => (payload as QueuedDelivery).delivery.deliveryId;

/**
 * The conformance suite every queue backend of answer-fast mode passes (the `DeliveryQueue` contract in
 * `@hookline/core`): `@hookline/bullmq`, `@hookline/pg-boss`, `memoryQueue()` from this package, and
 * yours. Call it at the top level of a vitest file; `factory` is called once per test with the
 * attempts and retry delay that test needs, and must give a queue of its own.
 *
 * It checks the contract on its own (`queue.work()` with processors of its own) and under a real
 * receiver (`receiver.work()`): enqueue is idempotent per scoped delivery and revives a dead letter
 * (once, however many producers try at once); a job runs once per success; a failure retries after its
 * delay, then dead-letters, so that a job that always fails runs exactly `attempts` times, the first
 * included; a job its processor calls dead (a `PermanentFailure`) or a corrupt one is
 * dead-lettered at once; a wait spends no try, however often, and 20 deliveries of one busy resource at
 * concurrency 10 are all handled; a hung processor holds its slot until it settles, and a handler past
 * `maxRunMs` fails its job and frees it; `close()` waits for running jobs, resolves within its bound
 * with a hung handler, and takes nothing more; dead letters carry their scope and `replay()` takes
 * what `deadLetters()` listed; the trace context survives the trip. At the limits: a delivery as large
 * as the receiver takes is queued or handled in the request, never refused; a job as large as the
 * queue carries (`bodyLimitBytes()`) is dead-lettered with a long error after one run; a failing
 * handler longer than the visibility timeout and the lease runs its tries once each, with two workers.
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
  const timeoutMs = options.timeoutMs ?? 20_000;
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
  async function eventually(what: string, check: () => boolean | Promise<boolean>, boundMs = timeoutMs): Promise<void> {
    const deadline = Date.now() + boundMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${name}: ${what} did not happen within ${boundMs} ms`);
      await sleep(20);
    }
  }

  /** Rejects when `promise` has not settled within the suite's bound. */
  async function within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${name}: ${what} did not happen within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  async function lettersOf(queue: DeliveryQueue, deliveryId: string): Promise<DeadLetter[]> {
    return (await queue.deadLetters({ limit: 1000 })).filter((letter) => letter.deliveryId === deliveryId);
  }

  /** A receiver in answer-fast mode on `queue`, its worker closed after the test. */
  function receiverOn(queue: DeliveryQueue, receiverOptions: { leaseMs?: number; maxRunMs?: number } = {}) {
    return createReceiver({ secret: SECRET, queue, store: memoryStore(), ...receiverOptions }).onError(() => {});
  }

  afterEach(async () => {
    // Workers before queues: the last opened is closed first.
    for (const close of opened.splice(0).reverse()) await close();
  });

  const test = (title: string, body: () => Promise<void>, timeout = testTimeoutMs) => it(title, { timeout }, body);

  describe(`${name} (queue conformance)`, () => {
    describeQueueLimits({ secret: SECRET, timeoutMs, subject, opened, eventually, lettersOf, test });

    describe('enqueue', () => {
      test('adds one job per scoped delivery: a second enqueue is a duplicate, another tenant scope another job', async () => {
        const { queue } = await subject();
        const job = queuedDelivery();
        expect(await queue.enqueue(job)).toEqual({ duplicate: false });
        expect(await queue.enqueue({ ...job, receivedAt: job.receivedAt + 5 })).toEqual({ duplicate: true });
        expect(await queue.enqueue({ ...job, scope: tenantScope('a') })).toEqual({ duplicate: false });
        const runs: (string | undefined)[] = [];
        work(queue, async ({ payload }) => {
          runs.push((payload as QueuedDelivery).scope);
          return { status: 'done' };
        });
        await eventually('two runs', () => runs.length === 2);
        await sleep(300);
        expect(runs.sort()).toEqual([tenantScope('a'), undefined]);
      });

      test("keeps apart tenants whose scope and deliveryId spell the same text (acme:wdl_x's wdl_e1, acme's wdl_x:wdl_e1)", async () => {
        const { queue } = await subject();
        const { deliveryId } = queuedDelivery().delivery;
        const jobs = [
          queuedDelivery({ scope: tenantScope(`acme:${deliveryId}`) }),
          queuedDelivery({ scope: tenantScope('acme') }),
          queuedDelivery(),
        ];
        jobs[0]!.delivery.deliveryId = 'wdl_e1';
        jobs[1]!.delivery.deliveryId = `${deliveryId}:wdl_e1`;
        jobs[2]!.delivery.deliveryId = `${deliveryId}:wdl_e1`;
        for (const job of jobs) expect(await queue.enqueue(job)).toEqual({ duplicate: false });
        const runs: string[] = [];
        work(queue, async ({ payload }) => {
          runs.push(`${(payload as QueuedDelivery).scope ?? ''} ${deliveryIdIn(payload)}`);
          return { status: 'done' };
        });
        await eventually('three runs', () => runs.length === 3);
        expect(runs.sort()).toEqual(jobs.map((job) => `${job.scope ?? ''} ${job.delivery.deliveryId}`).sort());
      });

      test('runs a job once when it succeeds; enqueueing it again afterwards is a duplicate and runs nothing', async () => {
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

      test('puts a dead letter back when its delivery is enqueued again, with fresh tries and the new payload', async () => {
        const { queue } = await subject({ attempts: 2 });
        const job = queuedDelivery();
        const seen: { attempt: number; receivedAt: number }[] = [];
        work(queue, async ({ attempt, payload }) => {
          seen.push({ attempt, receivedAt: (payload as QueuedDelivery).receivedAt });
          if (seen.length <= 2) throw new Error('downstream down');
          return { status: 'done' };
        });
        await queue.enqueue(job);
        await eventually('the dead letter', async () => (await lettersOf(queue, job.delivery.deliveryId)).length === 1);
        // The service's replay of the delivery: the same deliveryId, received again.
        const again = { ...job, receivedAt: job.receivedAt + 1_000 };
        expect(await queue.enqueue(again)).toEqual({ duplicate: false });
        await eventually('the run after revival', () => seen.length === 3);
        expect(seen.map(({ attempt }) => attempt)).toEqual([1, 2, 1]);
        expect(seen[2]?.receivedAt).toBe(again.receivedAt);
        expect(await lettersOf(queue, job.delivery.deliveryId)).toEqual([]);
        expect(await queue.enqueue(job)).toEqual({ duplicate: true });
      });

      test('revives a dead letter once when several producers enqueue it at the same moment', async () => {
        const under = await subject({ attempts: 1 });
        const { queue } = under;
        const other = under.another?.() ?? queue;
        const job = queuedDelivery();
        await queue.enqueue(job);
        let runs = 0;
        work(queue, async () => {
          runs += 1;
          return runs === 1 ? { status: 'dead', reason: 'PermanentFailure: unknown line' } : { status: 'done' };
        });
        await eventually('the dead letter', async () => (await lettersOf(queue, job.delivery.deliveryId)).length === 1);
        const answers = await Promise.all([queue.enqueue(job), other.enqueue(job), queue.enqueue(job), other.enqueue(job)]);
        expect(answers.filter(({ duplicate }) => !duplicate)).toHaveLength(1);
        await eventually('the run after revival', () => runs === 2);
        await sleep(300);
        expect(runs).toBe(2);
      });

      test('hands the worker the trace context the job was enqueued with', async () => {
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
    });

    describe('retries and dead letters', () => {
      test('retries a failed try after its delay, counting tries, then dead-letters it with the last error', async () => {
        const { queue } = await subject({ attempts: 3, retryDelayMs: 200 });
        const job = queuedDelivery();
        const tries: [attempt: number, at: number][] = [];
        work(queue, async ({ attempt, maxAttempts }) => {
          tries.push([attempt, Date.now()]);
          expect(maxAttempts).toBe(3);
          throw new Error(`try ${attempt} failed`);
        });
        await queue.enqueue(job);
        await eventually('the dead letter', async () => (await lettersOf(queue, job.delivery.deliveryId)).length === 1);
        expect(tries.map(([attempt]) => attempt)).toEqual([1, 2, 3]);
        for (let i = 1; i < tries.length; i++)
          expect((tries[i]?.[1] as number) - (tries[i - 1]?.[1] as number)).toBeGreaterThanOrEqual(150);
        const [letter] = await lettersOf(queue, job.delivery.deliveryId);
        expect(letter).toMatchObject({
          deliveryId: job.delivery.deliveryId,
          event: 'line.status_changed',
          attempts: 3,
          lastError: 'try 3 failed',
        });
        expect(letter?.scope).toBeUndefined();
        expect(letter?.failedAt).toBeInstanceOf(Date);
      });

      test('runs a job that fails every time exactly `attempts` times, the first included, and never again (1 and 4)', async () => {
        const runs = new Map<number, number[]>();
        await Promise.all(
          [1, 4].map(async (attempts) => {
            const { queue } = await subject({ attempts });
            const job = queuedDelivery();
            const seen: number[] = [];
            runs.set(attempts, seen);
            work(queue, async ({ attempt, maxAttempts }) => {
              seen.push(attempt);
              expect(maxAttempts).toBe(attempts);
              throw new Error('downstream down');
            });
            await queue.enqueue(job);
            await eventually(
              `the dead letter after ${attempts}`,
              async () => (await lettersOf(queue, job.delivery.deliveryId)).length === 1,
            );
            expect((await lettersOf(queue, job.delivery.deliveryId))[0]).toMatchObject({ attempts });
          }),
        );
        // Longer than a retry's delay on a backend that delays in whole seconds: a try too many would show.
        await sleep(1_500);
        expect(runs.get(1)).toEqual([1]);
        expect(runs.get(4)).toEqual([1, 2, 3, 4]);
      });

      test('dead-letters at once a job whose handler throws PermanentFailure, with its message', async () => {
        const { queue } = await subject({ attempts: 5 });
        const receiver = receiverOn(queue);
        let runs = 0;
        receiver.on('*', () => {
          runs += 1;
          throw new PermanentFailure('unknown line');
        });
        const worker = receiver.work();
        opened.push(() => worker.close());
        const job = queuedDelivery();
        await queue.enqueue(job);
        await eventually('the dead letter', async () => (await lettersOf(queue, job.delivery.deliveryId)).length === 1);
        const [letter] = await lettersOf(queue, job.delivery.deliveryId);
        expect(letter).toMatchObject({ attempts: 1, lastError: 'PermanentFailure: unknown line' });
        expect(runs).toBe(1);
      });

      test('dead-letters a corrupt job at once, naming it corrupt, and runs no handler', async () => {
        const { queue, addCorruptJob } = await subject({ attempts: 5 });
        const receiver = receiverOn(queue);
        let runs = 0;
        receiver.on('*', () => {
          runs += 1;
        });
        // Stored before any worker runs, so that none can take the job before it is corrupt.
        const deliveryId = `wdl_corrupt${randomUUID().replaceAll('-', '')}`;
        await addCorruptJob(deliveryId);
        const worker = receiver.work();
        opened.push(() => worker.close());
        await eventually('the dead letter', async () => (await lettersOf(queue, deliveryId)).length === 1);
        const [letter] = await lettersOf(queue, deliveryId);
        expect(letter?.lastError).toMatch(/corrupt/i);
        expect(runs).toBe(0);
      });

      test("lists each tenant's dead letter of one deliveryId with its scope, and replays exactly the one listed", async () => {
        const { queue } = await subject({ attempts: 1 });
        const job = queuedDelivery();
        const { deliveryId } = job.delivery;
        let verdict: JobResult = { status: 'dead', reason: 'PermanentFailure: unknown line' };
        const runs: string[] = [];
        work(
          queue,
          async ({ payload }) => {
            runs.push(`${(payload as QueuedDelivery).scope}${deliveryIdIn(payload)}`);
            return verdict;
          },
          2,
        );
        const [a, b] = [tenantScope('a'), tenantScope('b')];
        await queue.enqueue({ ...job, scope: a });
        await queue.enqueue({ ...job, scope: b });
        await eventually('two dead letters', async () => (await lettersOf(queue, deliveryId)).length === 2);
        const letters = await lettersOf(queue, deliveryId);
        expect(letters.map((letter) => letter.scope).sort()).toEqual([a, b]);
        const [ofA, ofB] = [letters.find((l) => l.scope === a), letters.find((l) => l.scope === b)] as [DeadLetter, DeadLetter];

        expect(await queue.replay(deliveryId)).toBe(false); // no scope: neither tenant's
        verdict = { status: 'done' };
        expect(await queue.replay(ofB)).toBe(true);
        expect(await queue.replay(ofB)).toBe(false); // not a dead letter any more
        await eventually("tenant b's run", () => runs.length === 3);
        expect(runs[2]).toBe(`${b}${deliveryId}`);
        expect((await lettersOf(queue, deliveryId)).map((letter) => letter.scope)).toEqual([a]);
        // A copy of what was listed works as well as the listed object.
        expect(await queue.replay({ deliveryId: ofA.deliveryId, scope: ofA.scope })).toBe(true);
        await eventually("tenant a's run", () => runs.length === 4);
        expect(await lettersOf(queue, deliveryId)).toEqual([]);
      });
    });

    describe('waits', () => {
      test('runs a job that waits again later without spending a try, however often it waits', async () => {
        const { queue } = await subject({ attempts: 2 });
        const job = queuedDelivery();
        const attempts: number[] = [];
        work(queue, async ({ attempt }) => {
          attempts.push(attempt);
          return attempts.length <= 10 ? { status: 'wait', delayMs: 20, reason: 'resource_busy' } : { status: 'done' };
        });
        await queue.enqueue(job);
        await eventually('eleven runs', () => attempts.length === 11);
        expect(attempts).toEqual(Array.from({ length: 11 }, () => 1));
        await sleep(200);
        expect(await lettersOf(queue, job.delivery.deliveryId)).toEqual([]);
        expect(await queue.enqueue(job)).toEqual({ duplicate: true }); // completed, and kept
      });

      test('never dead-letters a job by waiting: only a rejection spends a try', async () => {
        const { queue } = await subject({ attempts: 3 });
        const job = queuedDelivery();
        const attempts: number[] = [];
        work(queue, async ({ attempt }) => {
          attempts.push(attempt);
          if (attempts.length <= 5) return { status: 'wait', delayMs: 10, reason: 'predecessor_not_seen' }; // more waits than tries
          if (attempts.length === 6) throw new Error('downstream down');
          return { status: 'done' };
        });
        await queue.enqueue(job);
        await eventually('seven runs', () => attempts.length === 7);
        expect(attempts).toEqual([1, 1, 1, 1, 1, 1, 2]);
        expect(await lettersOf(queue, job.delivery.deliveryId)).toEqual([]);
      });

      test(
        'handles 20 deliveries of one busy resource at concurrency 10, each once, none at the same time, none dead',
        async () => {
          const { queue } = await subject({ attempts: 2 });
          const receiver = receiverOn(queue);
          const handled: string[] = [];
          let running = 0;
          let overlap = false;
          receiver.on(
            'line.status_changed',
            async (delivery) => {
              running += 1;
              overlap ||= running > 1;
              await sleep(30); // long enough for the others to be fetched meanwhile, even on a slow machine
              running -= 1;
              handled.push(delivery.deliveryId);
            },
            { name: 'status', order: { key: (d) => String(d.data.lineId), stale: 'run' } },
          );
          const worker = receiver.work({ concurrency: 10 });
          opened.push(() => worker.close());
          const jobs = Array.from({ length: 20 }, () => queuedDelivery());
          await Promise.all(jobs.map((job) => queue.enqueue(job)));
          // Each busy job's wait doubles with each claim of it (from 250 ms), so the last of 20 contenders
          // waits seconds: on a backend that delays in whole seconds this takes several times one job's bound.
          await eventually('20 handled', () => handled.length === 20, timeoutMs * 3);
          expect(new Set(handled).size).toBe(20);
          expect(overlap).toBe(false);
          expect(await queue.deadLetters({ limit: 1000 })).toEqual([]);
        },
        testTimeoutMs * 2,
      );
    });

    describe('slots and closing', () => {
      test('keeps a hung processor in its slot until it settles; its rejection spends a try and frees the slot', async () => {
        const { queue } = await subject({ attempts: 3 });
        const [hung, next] = [queuedDelivery(), queuedDelivery()];
        await queue.enqueue(hung);
        await queue.enqueue(next);
        let fail!: (error: Error) => void;
        const runs: string[] = [];
        work(queue, async ({ payload, attempt }) => {
          runs.push(`${deliveryIdIn(payload)}@${attempt}`);
          if (runs.length > 1) return { status: 'done' };
          // What the receiver's maxRunMs does to a handler that never returns: the processor rejects.
          return new Promise<JobResult>((_, reject) => {
            fail = reject;
          });
        });
        await eventually('the first run', () => runs.length === 1);
        await sleep(300);
        expect(runs).toHaveLength(1); // one slot, and it is taken
        fail(new Error('the handlers ran past maxRunMs'));
        await eventually('both other runs', () => runs.length === 3);
        const first = (runs[0] as string).split('@')[0] as string;
        const other = first === hung.delivery.deliveryId ? next.delivery.deliveryId : hung.delivery.deliveryId;
        expect(runs.slice(1).sort()).toEqual([`${first}@2`, `${other}@1`].sort());
      });

      test(
        'fails a job whose handler runs past maxRunMs and frees its slot; the retry runs it once its lease lapsed',
        async () => {
          const { queue } = await subject({ attempts: 4 });
          const receiver = receiverOn(queue, { leaseMs: 600, maxRunMs: 900 });
          const runs: string[] = [];
          const hung = queuedDelivery();
          receiver.on('*', (delivery) => {
            runs.push(delivery.deliveryId);
            if (delivery.deliveryId === hung.delivery.deliveryId && runs.length === 1) return new Promise<void>(() => {});
          });
          const worker = receiver.work({ concurrency: 1 });
          opened.push(() => worker.close());
          await queue.enqueue(hung);
          await eventually('the hung run', () => runs.length === 1);
          const next = queuedDelivery();
          await queue.enqueue(next);
          await eventually('the other job, in the freed slot', () => runs.includes(next.delivery.deliveryId));
          await eventually('the hung job, run again', () => runs.filter((id) => id === hung.delivery.deliveryId).length === 2);
          expect(await lettersOf(queue, hung.delivery.deliveryId)).toEqual([]);
        },
        testTimeoutMs * 2,
      );

      test('close() waits for a running processor, and its job (handed back) runs again without a spent try', async () => {
        const { queue } = await subject();
        await queue.enqueue(queuedDelivery());
        let settle!: (result: JobResult) => void;
        const attempts: number[] = [];
        const worker = queue.work(
          ({ attempt }) => {
            attempts.push(attempt);
            // Never settles by itself: what the receiver's close bound settles, as a wait.
            return new Promise<JobResult>((resolve) => {
              settle = resolve;
            });
          },
          { concurrency: 1 },
        );
        await eventually('the first run', () => attempts.length === 1);
        let closed = false;
        const closing = worker.close().then(() => {
          closed = true;
        });
        await sleep(300);
        expect(closed).toBe(false);
        settle({ status: 'wait', delayMs: 0, reason: 'the worker is closing' });
        await within(closing, 'close() after the processor settled');
        work(queue, async ({ attempt }) => {
          attempts.push(attempt);
          return { status: 'done' };
        });
        await eventually('the run by the next worker', () => attempts.length === 2);
        expect(attempts).toEqual([1, 1]);
      });

      test(
        'resolves close() within closeTimeoutMs with a hung handler; the job runs again elsewhere, its try not spent',
        async () => {
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
          await within(worker.close(), 'close() with a hung handler');

          // Another process takes over (here: another receiver on the same store) once the lease lapsed:
          // until then the handler still runs here, and its heartbeat keeps the job from running twice.
          const second = createReceiver({ secret: SECRET, queue, store, leaseMs: 500 });
          let runs = 0;
          second.on('*', () => {
            runs += 1;
          });
          const other = second.work();
          opened.push(() => other.close());
          await eventually('the run elsewhere', () => runs === 1);
          expect(await lettersOf(queue, job.delivery.deliveryId)).toEqual([]);
        },
        testTimeoutMs * 2,
      );

      test('takes no job once close() resolved; the job waits for the next worker', async () => {
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
        await queue.enqueue(queuedDelivery());
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
  });
}
