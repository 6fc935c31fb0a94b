/**
 * `receiver.work()`: consumes the queue of answer-fast mode. Each job is a delivery the receiver
 * verified on receipt; the worker checks the job's shape (a queue is outside the process: a corrupt
 * payload must end in the dead letters, not crash the worker), then runs it through the trusted entry
 * (claim → handlers → settle in the `work:` key namespace), so a job the queue delivers twice still
 * runs its handlers to success once.
 */
import { type DeliveryTrace, startTrace } from './diagnostics';
import { refuse } from './answers';
import { HooklineError } from './errors';
import { runTrusted } from './pipeline';
import type { JobResult, QueuedDelivery, QueueJob, QueueWorker } from './queue';
import { type ReceiverState, reportError } from './receiver-state';
import { type GuardRefusal, guardRefusal } from './steps/guard-refusals';

/** Options of `receiver.work()`. */
export interface WorkOptions {
  /**
   * Jobs run at once by this process.
   * @default 1
   */
  concurrency?: number;
  /**
   * How long `close()` waits for running jobs to finish. Past it, the jobs still running are handed
   * back to the queue (delayed by `leaseMs`, no try spent) and `close()` resolves, whatever their
   * handlers do: a handler still running holds its delivery's lease until the process exits or the
   * handler ends, so the job runs again elsewhere once that lease lapses, and never beside it. Whatever
   * the handlers and the queue's server do, `close()` resolves within `closeTimeoutMs` + 5 s (the
   * backend's own close gets 5 s more, then is given up on and reported). Keep it under your platform's
   * shutdown grace period (Kubernetes and ECS give 30 s before SIGKILL).
   * @default 10_000
   */
  closeTimeoutMs?: number;
}

/** Why a job payload cannot be trusted, or `undefined` when it has the shape the receiver enqueues. */
export function checkQueuedDelivery(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null) return 'the job payload is not an object';
  const { delivery, receivedAt, secretIndex } = payload as Partial<QueuedDelivery>;
  if (typeof delivery !== 'object' || delivery === null) return 'the job payload has no delivery';
  const { event, deliveryId, timestamp, data } = delivery as Partial<QueuedDelivery['delivery']>;
  if (typeof event !== 'string' || event.length === 0) return 'the queued delivery has no event';
  if (typeof deliveryId !== 'string' || !deliveryId.startsWith('wdl_')) return 'the queued delivery has no valid deliveryId';
  if (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp))) return 'the queued delivery has no valid timestamp';
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'the queued delivery has no data object';
  if (typeof receivedAt !== 'number' || typeof secretIndex !== 'number') return 'the job payload lacks receivedAt or secretIndex';
  const { scope } = payload as Partial<QueuedDelivery>;
  if (scope !== undefined && typeof scope !== 'string') return 'the job payload has a scope that is not a string';
  return undefined;
}

/** Runs one job and says what the queue should do with it: done, dead-letter now, or (a rejection) retry later. */
export async function processJob(state: ReceiverState, job: QueueJob): Promise<JobResult> {
  const corrupt = checkQueuedDelivery(job.payload);
  if (corrupt !== undefined) return { status: 'dead', reason: `corrupt job: ${corrupt}`, kind: 'corrupt' };
  const queued = job.payload as QueuedDelivery;
  const trace = startTrace(
    'work',
    () => queued.receivedAt,
    () => {
      const known: Partial<DeliveryTrace> = {
        event: queued.delivery.event,
        deliveryId: queued.delivery.deliveryId,
        timestampMs: Date.parse(queued.delivery.timestamp),
        attempt: job.attempt,
      };
      if (queued.traceparent !== undefined) known.traceparent = queued.traceparent;
      if (queued.tracestate !== undefined) known.tracestate = queued.tracestate;
      return known;
    },
  );
  const result = await runTrusted(state, queued, job.attempt, trace, job.signal);
  const { event, deliveryId } = queued.delivery;
  switch (result.outcome) {
    case 'handled':
    case 'duplicate':
      return { status: 'done' };
    case 'unhandled':
      return { status: 'dead', reason: `no handler takes ${event} any more`, kind: 'unhandled' };
    case 'permanent':
      return { status: 'dead', reason: `PermanentFailure: ${errorMessage(result.error)}`, kind: 'permanent' };
    case 'in_progress':
    case 'failed': {
      // Not a failure: the delivery, its record or its resource is held by another attempt, or its
      // predecessor has not been seen. The job waits without spending a try (colliding jobs would
      // otherwise use their tries up together and be dead-lettered without ever failing).
      const refusal = guardRefusal(result.error);
      if (refusal?.kind === 'wait') return waitFor(refusal, deliveryId, result.claims);
      throw failureOf(result.error);
    }
    default: {
      // The claim failed. A store that is not set up says so and names the fix: the queue keeps the
      // message as the dead letter's last error.
      const { error } = result;
      const why = HooklineError.is(error) && error.code === 'CONFIGURATION_ERROR' ? error.message : 'the store failed';
      throw new Error(`hookline: ${deliveryId} was not processed (${why}); retry later`);
    }
  }
}

/** The first wait of a busy job; each claim of the delivery doubles it, up to the holder's lease. */
const FIRST_WAIT_MS = 250;

/**
 * How long a job that cannot run yet waits.
 *
 * - Its resource or its handler's record is busy (`resource_busy`, `handler_in_progress`): the holder
 *   may finish any moment, so exponential from 250 ms with each claim of the delivery (every wait
 *   claims it once more), capped by what the holder's lease has left, times a random factor between
 *   0.5 and 1.5 so that jobs that collided once do not come back together.
 * - Another worker runs this very delivery (`in_progress`) or its predecessor has not been seen: the
 *   holder's lease (it ends, or the other worker finished and this job is a duplicate), or the
 *   service's own next gap (30 s, 2 min, …), plus up to a fifth.
 */
export function waitDelayMs(refusal: GuardRefusal, claims: number, random: () => number = Math.random): number {
  if (refusal.reason === 'in_progress' || refusal.reason === 'predecessor_not_seen') {
    return Math.round(Math.max(refusal.waitMs, FIRST_WAIT_MS) * (1 + random() / 5));
  }
  const backoff = FIRST_WAIT_MS * 2 ** Math.min(Math.max(claims - 1, 0), 16);
  return Math.round(Math.min(backoff, Math.max(refusal.waitMs, FIRST_WAIT_MS)) * (0.5 + random()));
}

function waitFor(refusal: GuardRefusal, deliveryId: string, claims: number): JobResult {
  const delayMs = waitDelayMs(refusal, claims);
  const reason = `${deliveryId} is ${refusal.reason ?? 'busy'}: waiting ${delayMs} ms without spending a try`;
  return { status: 'wait', delayMs, reason };
}

/**
 * A handler's failure as the job's rejection, its class named as a PermanentFailure's is (`TypeError:
 * …`, `Error: …`): queues keep a rejection's message as the dead letter's last error, so without the
 * name a plain Error read like a bare sentence beside `PermanentFailure: …`. The handler's own error is
 * the cause.
 */
function failureOf(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(errorMessage(error));
  return new Error(`${error.name}: ${error.message}`, { cause: error });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Starts consuming the receiver's queue. */
export function startWorker(state: ReceiverState, options: WorkOptions = {}): QueueWorker {
  const { queue } = state.config;
  if (queue === undefined) {
    throw refuse(
      'CONFIGURATION_ERROR',
      'receiver.work() needs a queue: createReceiver({ secret, store, queue: bullmqQueue(…) or pgBossQueue(…) }).',
    );
  }
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw refuse('CONFIGURATION_ERROR', `receiver.work(): concurrency must be a positive integer, got ${String(concurrency)}.`);
  }
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  if (typeof closeTimeoutMs !== 'number' || !Number.isFinite(closeTimeoutMs) || closeTimeoutMs < 0) {
    throw refuse(
      'CONFIGURATION_ERROR',
      `receiver.work(): closeTimeoutMs must be a number of milliseconds ≥ 0, got ${String(closeTimeoutMs)}.`,
    );
  }
  // Each running job's way out at close: the backend's close() waits for its processors, and a
  // handler may never end, so each processor can be settled from here with a hand-back.
  const running = new Set<(result: JobResult) => void>();
  const worker = queue.work(
    (job) =>
      new Promise<JobResult>((resolve, reject) => {
        running.add(resolve);
        processJob(state, job)
          .then(resolve, reject)
          .finally(() => running.delete(resolve));
      }),
    { concurrency },
  );
  const handBack: JobResult = {
    status: 'wait',
    delayMs: state.config.leaseMs,
    reason: `the worker closed before the job finished (closeTimeoutMs ${closeTimeoutMs}); it runs again once its lease lapses`,
  };
  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= new Promise<void>((resolve) => {
        const handBackTimer = setTimeout(() => {
          for (const settle of running) settle(handBack);
        }, closeTimeoutMs);
        // The backend's own close waits on its server too (to record the handed-back jobs, to quit its
        // connections), and a server that is gone can hold it for ever: past the grace, close() resolves
        // anyway and says so. The jobs it could not hand back run again once their leases lapse.
        const graceTimer = setTimeout(() => {
          reportError(
            state,
            new Error(
              `hookline: the ${queue.name} worker did not close within ${closeTimeoutMs + CLOSE_GRACE_MS} ms (closeTimeoutMs + ${CLOSE_GRACE_MS} ms): is its server reachable? close() resolved without it`,
            ),
            { phase: 'queue' },
          );
          resolve();
        }, closeTimeoutMs + CLOSE_GRACE_MS);
        const done = () => {
          clearTimeout(handBackTimer);
          clearTimeout(graceTimer);
          resolve();
        };
        worker.close().then(done, (error: unknown) => {
          reportError(state, error, { phase: 'queue' });
          done();
        });
      });
      return closing;
    },
  };
}

/** How long close() waits for the backend's own close beyond `closeTimeoutMs`. */
const CLOSE_GRACE_MS = 5_000;
