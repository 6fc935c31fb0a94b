/**
 * `memoryQueue()`: the queue contract of answer-fast mode (`DeliveryQueue` from `@hookline/core`)
 * held in this process's memory, for tests, examples and the deterministic simulation. It behaves as
 * the durable backends do (jobs stored as JSON, idempotent enqueue per scoped delivery, retries with
 * backoff, waits that spend no try, dead letters with their scope, revival on enqueue, a stalled job
 * taken back) but keeps nothing across a restart: never use it to answer the service in production.
 * Every timer is an ordinary `setTimeout`, so fake timers drive it.
 */
import {
  type DeadJobKind,
  type DeadLetter,
  type DeadLetterRef,
  DEFAULT_RETENTION_MS,
  type DeliveryQueue,
  JobTooLargeError,
  type JobResult,
  type QueuedDelivery,
  queuedDeliveryJson,
  type QueueJob,
  type QueueWorker,
  scopedDeliveryId,
  splitScopedId,
} from '@hookline/core/adapter';

/** Options of `memoryQueue()`. */
export interface MemoryQueueOptions {
  /**
   * Tries per job, the first included, before it is dead-lettered.
   * @default 7
   */
  attempts?: number;
  /**
   * Delay before a retry: exponential from `delayMs` (×2 each try), or fixed.
   * @default { type: 'exponential', delayMs: 10_000 }
   */
  backoff?: { type: 'exponential' | 'fixed'; delayMs: number };
  /**
   * How long a running job may go without its processor settling before the queue takes it back (its
   * worker is taken for dead): it runs again, and after `maxStalls` such returns it is dead-lettered.
   * Longer than the receiver's `maxRunMs`, as a real backend's lock or visibility timeout must be.
   * @default 900_000 (15 min)
   */
  stalledAfterMs?: number;
  /**
   * Times a job may stall before it is dead-lettered instead of run again.
   * @default 5
   */
  maxStalls?: number;
  /**
   * How long a completed job is kept, so enqueueing its delivery again is a duplicate.
   * @default 259_200_000 (72 h)
   */
  keepCompletedMs?: number;
  /**
   * The largest job (its JSON, in UTF-8 bytes) the queue takes, as a backend with a message size limit
   * has one: a larger enqueue rejects with `JobTooLargeError`, and the receiver handles that delivery in
   * the request. `bodyLimitBytes()` then says this less 1,024 bytes for the job's JSON around the body.
   * @default no limit
   */
  maxJobBytes?: number;
}

/** A job's state in the memory queue. */
export type MemoryJobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'dead';

/** One job as the memory queue holds it (a snapshot, for assertions). */
export interface MemoryJob {
  /** `(scope ?? '') + deliveryId`, what enqueue de-duplicates on. */
  readonly id: string;
  readonly state: MemoryJobState;
  /** Tries spent (failures); a wait spends none. */
  readonly attemptsMade: number;
  /** Times the job was handed to a processor (tries, waits and stalls included). */
  readonly runs: number;
  /** When a delayed job is due, in milliseconds since the epoch. */
  readonly runAt: number;
  readonly lastError: string;
  /**
   * Why a dead job is dead: what the worker said (`permanent`, `corrupt`, `unhandled`: a `dead`
   * result's `kind`), or the queue's own reason (`tries`: its last try failed; `stalled`: it stalled
   * more than `maxStalls` times). Undefined for a job that is not dead.
   */
  readonly deadKind: MemoryDeadKind | undefined;
}

/** Why the memory queue holds a job as a dead letter (`MemoryJob.deadKind`). */
export type MemoryDeadKind = DeadJobKind | 'tries' | 'stalled';

/** `memoryQueue()`'s queue: the contract, plus what a test wants to see and do. */
export interface MemoryQueue extends DeliveryQueue {
  /** Every job held, by scoped id. */
  jobs(): MemoryJob[];
  /** A job by what it was enqueued as (`{ deliveryId, scope }`, or the scoped id). */
  job(ref: DeadLetterRef): MemoryJob | undefined;
  /**
   * Adds a job whose stored payload is `json` as is (it need not be JSON at all): what a corrupt or
   * foreign job looks like to a worker.
   */
  addRaw(id: string, json: string): void;
  /** Resolves once no job is waiting, delayed or running (dead and completed ones stay). */
  idle(): Promise<void>;
}

interface Held {
  id: string;
  json: string;
  state: MemoryJobState;
  attemptsMade: number;
  runs: number;
  stalls: number;
  runAt: number;
  lastError: string;
  deadKind: MemoryDeadKind | undefined;
  failedAt: number;
  /** Which hand-over of the job the running processor holds: a stalled one's late result is ignored. */
  lease: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface Consumer {
  process: (job: QueueJob) => Promise<JobResult>;
  concurrency: number;
  running: Set<Promise<void>>;
  closing: boolean;
}

/**
 * A `DeliveryQueue` in memory: `createReceiver({ secret, queue: memoryQueue() })` then
 * `receiver.work()`, in a test or an example, with the semantics of the durable backends.
 *
 * @example
 * const queue = memoryQueue({ attempts: 3, backoff: { type: 'fixed', delayMs: 100 } });
 * const receiver = createReceiver({ secret, queue });
 * const worker = receiver.work({ concurrency: 4 });
 */
export function memoryQueue(options: MemoryQueueOptions = {}): MemoryQueue {
  const attempts = options.attempts ?? 7;
  const backoff = options.backoff ?? { type: 'exponential', delayMs: 10_000 };
  const stalledAfterMs = options.stalledAfterMs ?? 15 * 60_000;
  const maxStalls = options.maxStalls ?? 5;
  const keepCompletedMs = options.keepCompletedMs ?? DEFAULT_RETENTION_MS;
  const { maxJobBytes } = options;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`memoryQueue: attempts must be an integer ≥ 1, got ${attempts}`);
  if (!(backoff.delayMs >= 0)) throw new RangeError(`memoryQueue: backoff.delayMs must be ≥ 0, got ${backoff.delayMs}`);

  const held = new Map<string, Held>();
  const consumers = new Set<Consumer>();
  let idleWaiters: (() => void)[] = [];
  let pumpTimer: ReturnType<typeof setTimeout> | undefined;
  let pumpAt = Number.POSITIVE_INFINITY;

  const snapshot = (job: Held): MemoryJob => ({
    id: job.id,
    state: job.state,
    attemptsMade: job.attemptsMade,
    runs: job.runs,
    runAt: job.runAt,
    lastError: job.lastError,
    deadKind: job.state === 'dead' ? job.deadKind : undefined,
  });

  function due(job: Held, now: number): boolean {
    return job.state === 'waiting' || (job.state === 'delayed' && job.runAt <= now);
  }

  /** Hands due jobs to consumers with free slots, oldest due first; schedules itself for the next one due. */
  function pump(): void {
    pumpTimer = undefined;
    pumpAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    const ready = [...held.values()].filter((job) => due(job, now)).sort((a, b) => a.runAt - b.runAt);
    for (const consumer of consumers) {
      while (!consumer.closing && consumer.running.size < consumer.concurrency) {
        const job = ready.shift();
        if (job === undefined) break;
        start(consumer, job);
      }
    }
    // Jobs left ready wait for a slot: each processor that settles pumps again. Delayed ones get a timer.
    let next = Number.POSITIVE_INFINITY;
    for (const job of held.values()) if (job.state === 'delayed' && job.runAt > now) next = Math.min(next, job.runAt);
    if (next !== Number.POSITIVE_INFINITY) schedulePump(next);
    checkIdle();
  }

  function schedulePump(at: number): void {
    if (at >= pumpAt) return;
    if (pumpTimer !== undefined) clearTimeout(pumpTimer);
    pumpAt = at;
    pumpTimer = setTimeout(pump, Math.max(0, at - Date.now()));
    unrefTimer(pumpTimer); // like the backends' own polling, it never holds a process open by itself
  }

  function start(consumer: Consumer, job: Held): void {
    job.state = 'active';
    job.runs += 1;
    job.lease += 1;
    const lease = job.lease;
    let payload: unknown;
    try {
      payload = JSON.parse(job.json);
    } catch {
      payload = job.json; // not JSON: the worker sees what a backend would hand it, and refuses it
    }
    job.timer = setTimeout(() => stalled(job, lease), stalledAfterMs);
    unrefTimer(job.timer);
    const running = consumer
      .process({ payload, attempt: job.attemptsMade + 1, maxAttempts: attempts })
      .then(
        (result) => settle(job, lease, result, undefined),
        (error: unknown) => settle(job, lease, undefined, error),
      )
      .finally(() => {
        consumer.running.delete(running);
        schedulePump(Date.now());
      });
    consumer.running.add(running);
  }

  function settle(job: Held, lease: number, result: JobResult | undefined, error: unknown): void {
    if (job.lease !== lease || job.state !== 'active') return; // taken back as stalled meanwhile
    clearTimeout(job.timer);
    const now = Date.now();
    if (result?.status === 'done') {
      job.state = 'completed';
      job.timer = setTimeout(() => held.get(job.id) === job && job.state === 'completed' && held.delete(job.id), keepCompletedMs);
      unrefTimer(job.timer);
    } else if (result?.status === 'dead') {
      job.attemptsMade += 1;
      deadLetter(job, result.reason, result.kind, now);
    } else if (result?.status === 'wait') {
      job.state = 'delayed';
      job.runAt = now + Math.max(0, result.delayMs);
      job.lastError = result.reason;
    } else {
      job.attemptsMade += 1;
      job.lastError = error instanceof Error ? error.message : String(error);
      if (job.attemptsMade >= attempts) deadLetter(job, job.lastError, 'tries', now);
      else {
        job.state = 'delayed';
        const wait = backoff.type === 'fixed' ? backoff.delayMs : backoff.delayMs * 2 ** (job.attemptsMade - 1);
        job.runAt = now + wait;
      }
    }
  }

  function deadLetter(job: Held, reason: string, kind: MemoryDeadKind | undefined, now: number): void {
    job.state = 'dead';
    job.lastError = reason;
    job.deadKind = kind;
    job.failedAt = now;
  }

  /** Its processor did not settle in time: the worker is taken for dead, and the job runs again. */
  function stalled(job: Held, lease: number): void {
    if (job.lease !== lease || job.state !== 'active') return;
    job.lease += 1;
    job.stalls += 1;
    if (job.stalls > maxStalls) deadLetter(job, `stalled ${job.stalls} times: its worker never finished it`, 'stalled', Date.now());
    else {
      job.state = 'waiting';
      job.runAt = Date.now();
    }
    schedulePump(Date.now());
  }

  function checkIdle(): void {
    if (idleWaiters.length === 0) return;
    for (const job of held.values()) if (job.state === 'waiting' || job.state === 'delayed' || job.state === 'active') return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function revive(job: Held): void {
    clearTimeout(job.timer);
    job.state = 'waiting';
    job.attemptsMade = 0;
    job.stalls = 0;
    job.runAt = Date.now();
    job.lastError = '';
    job.deadKind = undefined;
    schedulePump(job.runAt);
  }

  function add(id: string, json: string): void {
    const job: Held = {
      id,
      json,
      state: 'waiting',
      attemptsMade: 0,
      runs: 0,
      stalls: 0,
      runAt: Date.now(),
      lastError: '',
      deadKind: undefined,
      failedAt: 0,
      lease: 0,
      timer: undefined,
    };
    held.set(id, job);
    schedulePump(job.runAt);
  }

  function describe(job: Held): DeadLetter {
    let payload: Partial<QueuedDelivery> | undefined;
    try {
      payload = JSON.parse(job.json) as Partial<QueuedDelivery>;
    } catch {
      payload = undefined;
    }
    // A corrupt payload names neither: the job's scoped id does.
    const { deliveryId, scope } =
      typeof payload?.delivery?.deliveryId === 'string'
        ? { deliveryId: payload.delivery.deliveryId, scope: typeof payload.scope === 'string' ? payload.scope : undefined }
        : splitScopedId(job.id);
    const letter: DeadLetter = {
      deliveryId,
      event: typeof payload?.delivery?.event === 'string' ? payload.delivery.event : 'unknown',
      attempts: Math.max(job.attemptsMade, 1),
      lastError: job.lastError,
      failedAt: new Date(job.failedAt),
    };
    if (scope !== undefined && scope !== '') letter.scope = scope;
    return letter;
  }

  return {
    name: 'memory',

    async enqueue(job: QueuedDelivery): Promise<{ duplicate: boolean }> {
      const id = scopedDeliveryId(job);
      const json = queuedDeliveryJson(job);
      const bytes = maxJobBytes === undefined ? 0 : Buffer.byteLength(json);
      if (maxJobBytes !== undefined && bytes > maxJobBytes) {
        throw new JobTooLargeError(
          `memoryQueue: the job of ${job.delivery.deliveryId} is ${bytes} bytes, over maxJobBytes`,
          bytes,
          maxJobBytes,
        );
      }
      const existing = held.get(id);
      if (existing === undefined) {
        add(id, json);
        return { duplicate: false };
      }
      if (existing.state !== 'dead') return { duplicate: true };
      existing.json = json;
      revive(existing);
      return { duplicate: false };
    },

    work(process, { concurrency }): QueueWorker {
      if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be an integer ≥ 1, got ${concurrency}`);
      const consumer: Consumer = { process, concurrency, running: new Set(), closing: false };
      consumers.add(consumer);
      schedulePump(Date.now());
      return {
        async close() {
          consumer.closing = true;
          while (consumer.running.size > 0) await Promise.allSettled([...consumer.running]);
          consumers.delete(consumer);
        },
      };
    },

    async deadLetters({ limit = 100 } = {}): Promise<DeadLetter[]> {
      if (limit <= 0) return [];
      return [...held.values()]
        .filter((job) => job.state === 'dead')
        .sort((a, b) => b.failedAt - a.failedAt)
        .slice(0, limit)
        .map(describe);
    },

    async replay(ref: DeadLetterRef): Promise<boolean> {
      const job = held.get(scopedDeliveryId(ref));
      if (job === undefined || job.state !== 'dead') return false;
      revive(job);
      return true;
    },

    async replayAll(): Promise<number> {
      let count = 0;
      for (const job of held.values()) {
        if (job.state !== 'dead') continue;
        revive(job);
        count += 1;
      }
      return count;
    },

    async close(): Promise<void> {},

    ...(maxJobBytes === undefined ? {} : { bodyLimitBytes: async () => maxJobBytes - 1_024 }),

    jobs: () => [...held.values()].map(snapshot),
    job(ref) {
      const job = held.get(scopedDeliveryId(ref));
      return job === undefined ? undefined : snapshot(job);
    },
    addRaw(id, json) {
      add(id, json);
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        checkIdle();
      });
    },
  };
}

function unrefTimer(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}
