/**
 * `receiver.work()`: consumes the queue of answer-fast mode. Each job is a delivery the receiver
 * verified on receipt; the worker checks the job's shape (a queue is outside the process: a corrupt
 * payload must end in the dead letters, not crash the worker), then runs it through the trusted entry
 * (claim → handlers → settle in the `work:` key namespace), so a job the queue delivers twice still
 * runs its handlers to success once.
 */
import type { DeliveryTrace } from './delivery-trace';
import { startTrace } from './diagnostics';
import { refuse } from './answers';
import { checkEnvelope, type EnvelopeFields, type EnvelopeIssue } from './envelope';
import { jobResult } from './job-result';
import { runTrusted } from './pipeline';
import type { JobResult, QueuedDelivery, QueueJob, QueueWorker } from './queue';
import { type ReceiverState, reportError } from './receiver-state';

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

/** What a corrupt job's dead letter says of each envelope field that receipt would have refused. */
const QUEUED_ENVELOPE_ISSUES: Record<EnvelopeIssue['field'], string> = {
  event: 'the queued delivery has no event',
  deliveryId: 'the queued delivery has no valid deliveryId',
  timestamp: 'the queued delivery has no valid timestamp',
  data: 'the queued delivery has no data object',
};

/**
 * The queued delivery's timestamp in milliseconds when the job payload has the shape the receiver
 * enqueues (parsed once, here, for the trace and the attempt), or why it cannot be trusted.
 */
function checkQueuedDelivery(payload: unknown): number | string {
  if (typeof payload !== 'object' || payload === null) return 'the job payload is not an object';
  const { delivery, receivedAt, secretIndex } = payload as Partial<QueuedDelivery>;
  if (typeof delivery !== 'object' || delivery === null) return 'the job payload has no delivery';
  const timestampMs = checkEnvelope(delivery as EnvelopeFields);
  if (typeof timestampMs !== 'number') return QUEUED_ENVELOPE_ISSUES[timestampMs.field];
  if (typeof receivedAt !== 'number' || typeof secretIndex !== 'number') return 'the job payload lacks receivedAt or secretIndex';
  const { scope } = payload as Partial<QueuedDelivery>;
  if (scope !== undefined && typeof scope !== 'string') return 'the job payload has a scope that is not a string';
  return timestampMs;
}

/** Runs one job and says what the queue should do with it: done, dead-letter now, or (a rejection) retry later. */
export async function processJob(state: ReceiverState, job: QueueJob): Promise<JobResult> {
  const timestampMs = checkQueuedDelivery(job.payload);
  if (typeof timestampMs === 'string') return { status: 'dead', reason: `corrupt job: ${timestampMs}`, kind: 'corrupt' };
  const queued = job.payload as QueuedDelivery;
  const trace = startTrace(
    'work',
    () => queued.receivedAt,
    () => {
      const known: Partial<DeliveryTrace> = {
        event: queued.delivery.event,
        deliveryId: queued.delivery.deliveryId,
        timestampMs,
        tries: job.attempt,
      };
      if (queued.traceparent !== undefined) known.traceparent = queued.traceparent;
      if (queued.tracestate !== undefined) known.tracestate = queued.tracestate;
      return known;
    },
  );
  const { outcome, claims } = await runTrusted(state, queued, timestampMs, trace, job.signal);
  return jobResult(outcome, queued.delivery, claims);
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
