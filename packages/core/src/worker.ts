/**
 * `receiver.work()`: consumes the queue of answer-fast mode. Each job is a delivery the receiver
 * verified on receipt; the worker checks the job's shape (a queue is outside the process: a corrupt
 * payload must end in the dead letters, not crash the worker), then runs it through the trusted entry
 * (claim → handlers → settle in the `work:` key namespace), so a job the queue delivers twice still
 * runs its handlers to success once.
 */
import { type DeliveryTrace, startTrace, traceReturned, traceSettled } from './diagnostics';
import { refuse } from './answers';
import { runTrusted } from './pipeline';
import type { JobResult, QueuedDelivery, QueueJob, QueueWorker } from './queue';
import type { ReceiverState } from './receiver-state';

/** Options of `receiver.work()`. */
export interface WorkOptions {
  /**
   * Jobs run at once by this process.
   * @default 1
   */
  concurrency?: number;
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
  if (corrupt !== undefined) return { status: 'dead', reason: `corrupt job: ${corrupt}` };
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
  const attempt = await runTrusted(state, queued, trace);
  if (trace !== undefined) {
    traceReturned(trace);
    trace.attempt = job.attempt;
    traceSettled(trace, attempt, undefined);
  }
  switch (attempt.outcome) {
    case 'handled':
    case 'duplicate':
      return { status: 'done' };
    case 'unhandled':
      return { status: 'dead', reason: `no handler takes ${attempt.delivery.event} any more` };
    case 'permanent':
      return { status: 'dead', reason: `PermanentFailure: ${errorMessage(attempt.error)}` };
    case 'failed':
      throw attempt.error instanceof Error ? attempt.error : new Error(errorMessage(attempt.error));
    case 'in_progress':
      throw new Error(`hookline: another worker is running ${attempt.delivery.deliveryId}; retry later`);
    default:
      throw new Error(`hookline: ${attempt.delivery.deliveryId} was not processed (the store failed); retry later`);
  }
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
  return queue.work((job) => processJob(state, job), { concurrency });
}
