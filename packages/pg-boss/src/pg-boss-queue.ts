import {
  type DeadLetter,
  type DeadLetterRef,
  type DeliveryQueue,
  type JobResult,
  type QueuedDelivery,
  type QueueJob,
  type QueueWorker,
  queuedDeliveryJson,
  refuseRenamedOptions,
  scopedDeliveryId,
  wakeablePause,
  withinTime,
} from '@hookline/core/adapter';
import PgBoss from 'pg-boss';
import { type FailedRow, deadLetterOf } from './dead-letter';
import { jobIdFor } from './job-id';
import { restartSql, waitSql } from './job-sql';

const DAY_S = 86_400;

/** pg-boss takes whole seconds; a duration in milliseconds is rounded up to them. */
function wholeSeconds(name: string, ms: number): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`pgBossQueue: ${name} must be a non-negative number of milliseconds, got ${ms}`);
  }
  return Math.ceil(ms / 1000);
}

/** A `pg` client or pool (anything with `query(text, values)`), e.g. the client of your open transaction. */
export interface PgTextQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Options of `pgBossQueue()`: either your started `boss`, or a `connectionString` to make one. */
export interface PgBossQueueOptions {
  /**
   * Your own PgBoss instance, already `start()`ed; you stop it. Give it `archiveFailedAfterSeconds`
   * long enough for people to look at dead letters (pg-boss's default archives them after 12 h,
   * after which they are no longer listed or replayable here).
   */
  boss?: PgBoss;
  /**
   * A PostgreSQL URL: the queue makes its own PgBoss (started on first use, stopped by `close()`),
   * keeping completed jobs 72 h and failed ones 30 days before pg-boss archives them.
   */
  connectionString?: string;
  /**
   * Extra PgBoss constructor options when the queue makes its own (`max`, `maintenanceIntervalSeconds`, …).
   */
  bossOptions?: PgBoss.ConstructorOptions;
  /**
   * The pg-boss queue name. Web and worker processes must use the same one.
   * @default 'hookline-deliveries'
   */
  name?: string;
  /**
   * pg-boss's schema (its `schema` option): where the job table is read for dead letters and replays.
   * @default 'pgboss'
   */
  schema?: string;
  /**
   * Tries per job, the first included, before it is dead-lettered (pg-boss's `retryLimit` + 1).
   * @default 7
   */
  attempts?: number;
  /**
   * Delay between tries: exponential from `delayMs` (10 s, 20 s, 40 s, …), or fixed. pg-boss counts
   * whole seconds (a delay is rounded up) and adds jitter to an exponential backoff: each wait is
   * between its delay and twice that (pg-boss's `retryBackoff`).
   * @default { type: 'exponential', delayMs: 10_000 }
   */
  backoff?: { type: 'exponential' | 'fixed'; delayMs: number };
  /**
   * How long a job may stay active before pg-boss takes it back and retries it (a worker that died
   * mid-job), in milliseconds (pg-boss counts whole seconds: rounded up). Longer than your slowest
   * handler run.
   * @default 900_000 (pg-boss's 15 minutes)
   */
  expireInMs?: number;
  /**
   * How often an idle worker asks for new jobs.
   * @default 2_000
   */
  pollingIntervalMs?: number;
  /**
   * The bound on each call that waits on PostgreSQL from the web side (`enqueue`, `deadLetters`,
   * `replay`): past it the call rejects, so the receiver answers 503 well inside the service's 30 s.
   * @default 5_000
   */
  commandTimeoutMs?: number;
  /**
   * Called with errors the worker meets in the background (PostgreSQL unreachable, a completion lost).
   * @default logs them with console.error
   */
  onError?: (error: Error) => void;
}

/** What `pgBossQueue()` returns: the `DeliveryQueue`, an in-transaction enqueue, and the PgBoss instance. */
export interface PgBossDeliveryQueue extends DeliveryQueue {
  /**
   * `enqueue`, optionally inside your transaction: pass the `pg` client that ran `BEGIN` as `db` and
   * the job exists only if that transaction commits (pg-boss's `db` option of `send`).
   */
  enqueue(job: QueuedDelivery, options?: { db?: PgTextQueryable }): Promise<{ duplicate: boolean }>;
  /** The PgBoss instance (yours, or the one made from `connectionString`), started. */
  boss(): Promise<PgBoss>;
}

function errorOf(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function quoteIdent(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

/**
 * A `DeliveryQueue` on pg-boss (PostgreSQL) for answer-fast mode: `createReceiver({ secret, store, queue })`.
 * Each delivery is one job whose id is the UUID v5 of its deliveryId, so a second enqueue adds
 * nothing; a failed try is retried with backoff; a job that can never succeed, or that used its last
 * try, stays in the `failed` state: those are the dead letters, listed and replayed from here.
 *
 * @example
 * const queue = pgBossQueue({ connectionString: process.env.DATABASE_URL });
 * const receiver = createReceiver({ secret, store: postgresStore({ client: pool }), queue });
 */
export function pgBossQueue(options: PgBossQueueOptions): PgBossDeliveryQueue {
  refuseRenamedOptions('pgBossQueue', options, {
    retryDelaySeconds: 'backoff.delayMs',
    retryDelayMs: 'backoff.delayMs',
    retryBackoff: { to: 'backoff.type', note: "'exponential' (was true) or 'fixed' (was false)" },
    expireInSeconds: 'expireInMs',
  });
  if ((options.boss === undefined) === (options.connectionString === undefined)) {
    throw new TypeError('pgBossQueue: pass exactly one of `boss` (your started PgBoss) or `connectionString`');
  }
  const name = options.name ?? 'hookline-deliveries';
  const schema = options.schema ?? options.bossOptions?.schema ?? 'pgboss';
  const attempts = options.attempts ?? 7;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`pgBossQueue: attempts must be an integer ≥ 1, got ${attempts}`);
  const timeoutMs = options.commandTimeoutMs ?? 5_000;
  const pollingIntervalMs = options.pollingIntervalMs ?? 2_000;
  const onError = options.onError ?? ((error: Error) => console.error(`hookline pg-boss queue "${name}": ${error.message}`));
  const backoff = options.backoff ?? { type: 'exponential', delayMs: 10_000 };
  if (backoff.type !== 'exponential' && backoff.type !== 'fixed') {
    throw new RangeError(`pgBossQueue: backoff.type must be 'exponential' or 'fixed', got ${String(backoff.type)}`);
  }
  const jobOptions = {
    retryLimit: attempts - 1,
    retryDelay: wholeSeconds('backoff.delayMs', backoff.delayMs),
    retryBackoff: backoff.type === 'exponential',
    ...(options.expireInMs === undefined ? {} : { expireInSeconds: Math.max(1, wholeSeconds('expireInMs', options.expireInMs)) }),
  };
  const quotedSchema = quoteIdent(schema);
  const table = `${quotedSchema}.job`;
  const owned = options.boss === undefined;

  let started: Promise<PgBoss> | undefined;
  function ready(): Promise<PgBoss> {
    started ??= (async () => {
      let boss = options.boss;
      if (boss === undefined) {
        boss = new PgBoss({
          archiveCompletedAfterSeconds: 3 * DAY_S,
          archiveFailedAfterSeconds: 30 * DAY_S,
          ...options.bossOptions,
          connectionString: options.connectionString as string,
          schema,
        });
        boss.on('error', onError);
        await boss.start();
      }
      await createQueueOnce(boss, name, jobOptions);
      return boss;
    })();
    // A failed start (PostgreSQL down) is tried again by the next call, not cached.
    started.catch(() => {
      started = undefined;
    });
    return started;
  }

  const sql = async (text: string, values: unknown[]) => (await ready()).getDb().executeSql(text, values);

  return {
    name: 'pg-boss',
    commandTimeoutMs: timeoutMs,
    boss: ready,

    async enqueue(job, { db } = {}) {
      return withinTime(
        (async () => {
          const boss = await ready();
          const wrapper = db === undefined ? {} : { db: { executeSql: (text: string, values: unknown[]) => db.query(text, values) } };
          const id = jobIdFor(scopedDeliveryId(job));
          // pg-boss inserts with ON CONFLICT DO NOTHING and answers null when the id was taken.
          if ((await boss.send(name, job as unknown as object, { ...jobOptions, id, ...wrapper })) !== null) return { duplicate: false };
          // Taken: a dead letter is started over with this payload (the service replayed a delivery
          // that never completed); any other state is a duplicate. In the caller's transaction too.
          // Of two concurrent revivals the second waits for the first's row lock, then finds the job
          // no longer failed: one revival.
          const revive = [name, id, queuedDeliveryJson(job)];
          const text = restartSql(quotedSchema, 'AND id = $2', attempts, '$3');
          const { rows } = db === undefined ? await boss.getDb().executeSql(text, revive) : await db.query(text, revive);
          return { duplicate: rows.length === 0 };
        })(),
        timeoutMs,
        `pg-boss enqueue of ${job.delivery.deliveryId}`,
        'PostgreSQL',
      );
    },

    work(process: (job: QueueJob) => Promise<JobResult>, { concurrency }: { concurrency: number }): QueueWorker {
      if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be an integer ≥ 1, got ${concurrency}`);
      const running = new Set<Promise<void>>();
      let stopping = false;
      const { pause, wake } = wakeablePause();

      async function settle(boss: PgBoss, job: PgBoss.JobWithMetadata<unknown>): Promise<void> {
        let result: JobResult | undefined;
        let failure: Error | undefined;
        try {
          result = await process({ payload: job.data, attempt: job.retryCount + 1, maxAttempts: job.retryLimit + 1 });
        } catch (error) {
          failure = errorOf(error);
        }
        try {
          if (result?.status === 'done') {
            await boss.complete(name, job.id);
          } else if (result?.status === 'wait') {
            // Back to the queue, due after the delay, without spending a try (see waitSql).
            await boss.getDb().executeSql(waitSql(quotedSchema), [name, job.id, waitMs(result.delayMs)]);
          } else if (result?.status === 'dead') {
            // pg-boss has no "fail without retry": use up the tries first, then fail. Should the
            // process die in between, the job expires and, with no tries left, fails all the same.
            await boss
              .getDb()
              .executeSql(`UPDATE ${table} SET retry_limit = retry_count WHERE name = $1 AND id = $2 AND state = 'active'`, [name, job.id]);
            await boss.fail(name, job.id, { message: result.reason, dead: true });
          } else {
            await boss.fail(name, job.id, { message: failure?.message ?? 'unknown error' });
          }
        } catch (error) {
          // The job stays active until it expires, then comes back: at least once, and the worker's
          // claim in the store keeps its handlers from running twice.
          onError(errorOf(error));
        }
      }

      // One fetch loop per worker: it asks for as many jobs as there are free slots, so an idle
      // worker costs one query per polling interval whatever its concurrency.
      const pump = (async () => {
        while (!stopping) {
          if (running.size >= concurrency) {
            await Promise.race(running);
            continue;
          }
          let jobs: PgBoss.JobWithMetadata<unknown>[];
          let boss: PgBoss;
          try {
            boss = await ready();
            jobs = await boss.fetch<unknown>(name, { batchSize: concurrency - running.size, includeMetadata: true });
          } catch (error) {
            if (stopping) break;
            onError(errorOf(error));
            await pause(pollingIntervalMs);
            continue;
          }
          if (jobs.length === 0) {
            await pause(pollingIntervalMs);
            continue;
          }
          for (const job of jobs) {
            const task: Promise<void> = settle(boss, job).finally(() => running.delete(task));
            running.add(task);
          }
        }
      })();

      return {
        async close() {
          stopping = true;
          wake();
          await pump;
          await Promise.all(running);
        },
      };
    },

    async deadLetters({ limit = 100 }: { limit?: number } = {}): Promise<DeadLetter[]> {
      if (limit <= 0) return [];
      const { rows } = await withinTime(
        sql(
          `SELECT id, name, data, retry_count + 1 AS attempts, completed_on AS failed_at,
                  COALESCE(output->>'message', output->'value'->>'message', output::text) AS last_error
             FROM ${table} WHERE name = $1 AND state = 'failed' ORDER BY completed_on DESC, id LIMIT $2`,
          [name, limit],
        ),
        timeoutMs,
        'pg-boss dead-letter listing',
        'PostgreSQL',
      );
      return (rows as FailedRow[]).map(deadLetterOf);
    },

    async replay(letter: DeadLetterRef): Promise<boolean> {
      const scoped = scopedDeliveryId(letter);
      // A letter listed under its job id (a payload that names no delivery of its own) is found by it.
      const ids = UUID.test(scoped) ? [jobIdFor(scoped), scoped] : [jobIdFor(scoped)];
      const { rows } = await withinTime(
        sql(restartSql(quotedSchema, 'AND id = ANY($2::uuid[])', attempts), [name, ids]),
        timeoutMs,
        `pg-boss replay of ${scoped}`,
        'PostgreSQL',
      );
      return rows.length === 1;
    },

    async replayAll(): Promise<number> {
      const { rows } = await withinTime(
        sql(restartSql(quotedSchema, '', attempts), [name]),
        timeoutMs,
        'pg-boss replay of every dead letter',
        'PostgreSQL',
      );
      return rows.length;
    },

    async close() {
      if (!owned || started === undefined) return;
      const boss = await started.catch(() => undefined);
      await boss?.stop({ graceful: false, wait: true });
    },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A wait's delay in whole milliseconds, none below 0 (a NaN runs it again at once). */
function waitMs(delayMs: number): number {
  return Number.isFinite(delayMs) && delayMs > 0 ? Math.ceil(delayMs) : 0;
}

// pg-boss 10's createQueue is a no-op for a queue that exists, but two processes creating the same
// new queue at once can deadlock in it (each adds its partition's foreign key): a web and a worker
// process starting together do exactly that. Look first, and try again after a deadlock.
async function createQueueOnce(boss: PgBoss, name: string, options: Omit<PgBoss.Queue, 'name'>): Promise<void> {
  for (let tries = 1; ; tries++) {
    if ((await boss.getQueue(name)) !== null) return;
    try {
      await boss.createQueue(name, { name, ...options });
      return;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // 40P01 deadlock_detected, 23505 unique_violation: another process is creating it right now.
      if ((code !== '40P01' && code !== '23505') || tries >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200 * tries));
    }
  }
}
