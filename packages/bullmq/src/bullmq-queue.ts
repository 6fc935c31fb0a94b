import {
  type DeadLetter,
  type DeadLetterRef,
  DEFAULT_RETENTION_MS,
  type DeliveryQueue,
  type JobResult,
  type QueuedDelivery,
  type QueueJob,
  type QueueWorker,
  refuseRenamedOptions,
  scopedDeliveryId,
  withinTime,
} from '@hookline/core/adapter';
import { type ConnectionOptions, DelayedError, type Job, type Queue, UnrecoverableError, type WorkerOptions } from 'bullmq';
import { deadLetterOf } from './dead-letter';
import { DeliveryQueueClient, DeliveryWorker, unreadableData } from './delivery-job';
import { enqueueBatcher } from './enqueue-batch';
import { jobIdFor } from './job-id';
import { retryDeadLetter } from './revive';

const HOUR_MS = 3_600_000;

/** What enqueues, lists and replays: BullMQ's Queue (one Redis connection) and the enqueue batcher on it. */
interface ProducerSide {
  queue: Queue;
  enqueue: ReturnType<typeof enqueueBatcher>;
}

/** Options of `bullmqQueue()`. */
export interface BullmqQueueOptions {
  /**
   * How BullMQ reaches Redis: an ioredis instance or ioredis options (`{ host, port }`, `{ url }`).
   * BullMQ opens its own connections from it (a worker needs a blocking one); a worker's connection
   * must have `maxRetriesPerRequest: null`, which is what BullMQ sets when you pass options.
   */
  connection: ConnectionOptions;
  /**
   * The BullMQ queue name. Web and worker processes must use the same one.
   * @default 'hookline-deliveries'
   */
  name?: string;
  /**
   * BullMQ's key prefix (every key is `<prefix>:<name>:…`).
   * @default 'bull'
   */
  prefix?: string;
  /**
   * Tries per job, the first included, before it is dead-lettered.
   * @default 7
   */
  attempts?: number;
  /**
   * Delay between tries: exponential from `delayMs` (10 s, 20 s, 40 s, …), or fixed.
   * @default { type: 'exponential', delayMs: 10_000 }
   */
  backoff?: { type: 'exponential' | 'fixed'; delayMs: number };
  /**
   * Times a job may come back after its worker stopped renewing its lock (the process died, or its
   * event loop was blocked past `lockDuration`) before it is dead-lettered instead of run again
   * (BullMQ's `maxStalledCount`, whose own default of 1 would dead-letter a job whose worker crashed
   * twice). A stall spends no try.
   * @default 5
   */
  maxStalls?: number;
  /**
   * How long a completed job is kept, so an enqueue of the same deliveryId is still a duplicate.
   * The default matches the receiver's `retentionMs` (72 h). Lowering it is safe: the worker's claim
   * keeps the handlers from running twice; it only means a retry after that long adds a second job
   * (answered 202 rather than 200), which finishes at once.
   * @default 72 h
   */
  keepCompletedMs?: number;
  /**
   * How long a dead-lettered job stays in BullMQ's failed set, listable and replayable.
   * @default 30 days
   */
  keepDeadLettersMs?: number;
  /**
   * The bound on each call that waits on Redis from the web side (`enqueue`, `deadLetters`,
   * `replay`): past it the call rejects, so the receiver answers 503 well inside the service's 30 s.
   * @default 5_000
   */
  commandTimeoutMs?: number;
  /**
   * Extra BullMQ worker options (`lockDuration`, `stalledInterval`, `drainDelay`, …). Stalls are
   * counted by `maxStalls`.
   */
  worker?: Omit<WorkerOptions, 'connection' | 'concurrency' | 'prefix' | 'autorun' | 'maxStalledCount'>;
  /**
   * Called with errors the worker and queue report in the background (Redis connection lost, …).
   * @default logs them with console.error
   */
  onError?: (error: Error) => void;
}

/** What `bullmqQueue()` returns: the `DeliveryQueue` plus the underlying BullMQ queue. */
export interface BullmqDeliveryQueue extends DeliveryQueue {
  /**
   * The producer-side BullMQ `Queue`, for dashboards and metrics. Made (with its Redis connection) on
   * first use, of this or of `enqueue`, `deadLetters` or `replay`; `close()` closes it.
   */
  readonly queue: Queue;
}

/**
 * A `DeliveryQueue` on BullMQ (Redis) for answer-fast mode: `createReceiver({ secret, store, queue })`.
 * Each delivery becomes one job whose id derives from its deliveryId (enqueueing it again adds
 * nothing); a failed try is retried with backoff; a job that can never succeed, or that used its last
 * try, stays in BullMQ's failed set: those are the dead letters, listed and replayed from here.
 *
 * A job is as durable as Redis is: run it with AOF persistence (`appendonly yes`,
 * `appendfsync everysec` or `always`) so a restart does not lose what was answered 202.
 *
 * @example
 * const queue = bullmqQueue({ connection: { host: '127.0.0.1', port: 6379 } });
 * const receiver = createReceiver({ secret, store: redisStore({ client }), queue });
 */
export function bullmqQueue(options: BullmqQueueOptions): BullmqDeliveryQueue {
  refuseRenamedOptions('bullmqQueue', options, { 'worker.maxStalledCount': 'maxStalls' });
  const name = options.name ?? 'hookline-deliveries';
  const attempts = options.attempts ?? 7;
  const backoff = options.backoff ?? { type: 'exponential', delayMs: 10_000 };
  const timeoutMs = options.commandTimeoutMs ?? 5_000;
  const onError = options.onError ?? ((error: Error) => console.error(`hookline bullmq queue "${name}": ${error.message}`));
  const maxStalls = options.maxStalls ?? 5;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`bullmqQueue: attempts must be an integer ≥ 1, got ${attempts}`);
  if (!Number.isInteger(maxStalls) || maxStalls < 0)
    throw new RangeError(`bullmqQueue: maxStalls must be an integer ≥ 0, got ${maxStalls}`);
  // BullMQ's own rule for a queue name, checked here since its Queue is made on first use only.
  if (name === '' || name.includes(':')) throw new RangeError(`bullmqQueue: name must be a non-empty string without ':', got '${name}'`);

  // The producer side (BullMQ's Queue, which opens a Redis connection, and the enqueue batcher) is
  // made on first use: a worker process never enqueues, and a connection it never used would keep it
  // alive after `worker.close()` (a deploy would wait for SIGKILL). close() closes it only if it exists.
  let producer: ProducerSide | undefined;
  let closed = false;
  function producerSide(): ProducerSide {
    if (producer !== undefined) return producer;
    if (closed) throw closedError(name);
    const queue = new DeliveryQueueClient(name, {
      connection: options.connection,
      ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
      defaultJobOptions: {
        attempts,
        backoff: { type: backoff.type, delay: backoff.delayMs },
        removeOnComplete: { age: Math.ceil((options.keepCompletedMs ?? DEFAULT_RETENTION_MS) / 1000) },
        removeOnFail: { age: Math.ceil((options.keepDeadLettersMs ?? 30 * 24 * HOUR_MS) / 1000) },
      },
    });
    queue.on('error', onError);
    producer = { queue, enqueue: enqueueBatcher(queue, timeoutMs) };
    return producer;
  }

  return {
    name: 'bullmq',
    commandTimeoutMs: timeoutMs,
    get queue() {
      return producerSide().queue;
    },

    enqueue(job: QueuedDelivery): Promise<{ duplicate: boolean }> {
      if (closed && producer === undefined) return Promise.reject(closedError(name));
      // Per-tenant receivers scope deliveryIds (two tenants may send the same one): the job is theirs.
      return producerSide().enqueue(jobIdFor(scopedDeliveryId(job)), job);
    },

    work(process: (job: QueueJob) => Promise<JobResult>, { concurrency }: { concurrency: number }): QueueWorker {
      const worker = new DeliveryWorker(
        name,
        async (job: Job, token?: string) => {
          // UnrecoverableError: BullMQ moves the job to the failed set now, whatever tries are left.
          const unreadable = unreadableData(job);
          if (unreadable !== undefined) throw new UnrecoverableError(`corrupt job: ${unreadable}`);
          const result = await process({ payload: job.data, attempt: job.attemptsMade + 1, maxAttempts: job.opts.attempts ?? 1 });
          if (result.status === 'dead') throw new UnrecoverableError(result.reason);
          if (result.status === 'wait') {
            // moveToDelayed skips the try (its script leaves attemptsMade as it is) and drops the
            // lock; DelayedError tells the worker the job has moved, so it neither completes nor
            // fails it, and stops renewing its lock.
            await job.moveToDelayed(Date.now() + waitMs(result.delayMs), token);
            throw new DelayedError(result.reason);
          }
        },
        {
          ...options.worker,
          maxStalledCount: maxStalls,
          connection: options.connection,
          concurrency,
          ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
        },
      );
      worker.on('error', onError);
      return { close: () => worker.close() };
    },

    async deadLetters({ limit = 100 }: { limit?: number } = {}): Promise<DeadLetter[]> {
      if (limit <= 0) return [];
      const jobs = await withinTime(producerSide().queue.getFailed(0, limit - 1), timeoutMs, 'bullmq dead-letter listing', 'Redis');
      return jobs
        .filter((job): job is Job => job !== undefined && job !== null)
        .map(deadLetterOf)
        .sort((a, b) => b.failedAt.getTime() - a.failedAt.getTime());
    },

    async replay(letter: DeadLetterRef): Promise<boolean> {
      const scoped = scopedDeliveryId(letter);
      return withinTime(retryDeadLetter(producerSide().queue, jobIdFor(scoped)), timeoutMs, `bullmq replay of ${scoped}`, 'Redis');
    },

    async replayAll(): Promise<number> {
      const { queue } = producerSide();
      // Bounded by the count at the start, so jobs that fail again meanwhile are not replayed twice.
      let left = await withinTime(queue.getFailedCount(), timeoutMs, 'bullmq dead-letter count', 'Redis');
      let replayed = 0;
      while (left > 0) {
        const page = await withinTime(queue.getFailed(0, Math.min(left, 100) - 1), timeoutMs, 'bullmq dead-letter listing', 'Redis');
        if (page.length === 0) break;
        for (const job of page) {
          left--;
          if (job === undefined || job === null || job.id === undefined) continue;
          if (await withinTime(retryDeadLetter(queue, job.id, { job }), timeoutMs, 'bullmq replay', 'Redis')) replayed++;
        }
      }
      return replayed;
    },

    async close() {
      closed = true;
      await producer?.queue.close();
    },
  };
}

/** What a call that needs the producer side meets once `close()` ran before it was ever made. */
function closedError(name: string): Error {
  return new Error(`hookline bullmq queue "${name}": closed (close() was called)`);
}

/** A wait's delay as BullMQ takes it: whole milliseconds, none below 0 (a NaN runs it again at once). */
function waitMs(delayMs: number): number {
  return Number.isFinite(delayMs) && delayMs > 0 ? Math.ceil(delayMs) : 0;
}
