/**
 * One receiver process's view of the shared queue (answer-fast mode), with faults. The queue is the
 * durable server every process shares: it outlives any of them.
 *
 * - `enqueue` travels over the network like a store call (network.ts): it fails, loses its answer,
 *   answers late or hangs, or its process crashes right after it landed.
 * - A worker's processor gets its jobs through the process's gate: a paused process starts a job it
 *   was handed when it resumes, and its answer waits too; a crashed one never answers, so the queue
 *   takes the job back once it stalls (`stalledAfterMs`). A crash also stops the process's workers
 *   from fetching more (`stop()`), as a dead process fetches nothing.
 */
import type { DeadLetterRef, DeliveryQueue, JobResult, QueuedDelivery, QueueJob, QueueWorker } from '@hookline/core/adapter';
import type { SimContext } from './context';
import type { Incarnation } from './incarnation';
import type { Handover, TryResult } from './job-ledger';
import type { StoreFaultKind } from './ledger';
import { overTheNetwork } from './network';
import { handledInRequest } from './scenario';
import { countFault, countQueue } from './stats';
import { never } from './never';

/** A failed try's error: its message, and the reason a refusal carries (`resource_busy`, `in_progress`). */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const reason = (error as { details?: { reason?: unknown } }).details?.reason;
  return typeof reason === 'string' ? `${error.message} (${reason})` : error.message;
}

export class FaultQueue implements DeliveryQueue {
  readonly name = 'memory';
  private readonly consumers: QueueWorker[] = [];

  constructor(
    private readonly context: SimContext,
    private readonly host: Incarnation,
    /** The shared queue, or a mutant of it (mutants.ts). */
    private readonly shared: DeliveryQueue,
  ) {}

  enqueue(job: QueuedDelivery): Promise<{ duplicate: boolean }> {
    const { host } = this;
    if (host.crashed) return never();
    if (host.paused) return new Promise((resolve, reject) => host.gate(() => this.enqueue(job).then(resolve, reject)));
    const id = job.delivery.deliveryId;
    // The queue answers with a promise of its own: it travels back as the answer, flattened here.
    return overTheNetwork(this.context, host, {
      land: () => this.land(job),
      fault: (kind, landedInTime, minutesLate) => this.fault(id, kind, landedInTime, minutesLate),
      crashAfter: this.context.mayCrashNow(this.context.scenario.rates.crashAfterStoreCall),
      server: 'queue',
      operation: 'enqueue',
      what: `enqueue of ${id}`,
    }).then((answer) => answer);
  }

  /** The enqueue reaches the queue: what it found there and what it did, observed on both sides. */
  private land(job: QueuedDelivery): Promise<{ duplicate: boolean }> {
    const { jobs, trace, stats } = this.context;
    const id = job.delivery.deliveryId;
    if (handledInRequest(this.context.scenario, id)) {
      countQueue(stats, 'enqueue-too-large');
      trace.add(this.host.id, `queue enqueue ${id} → refused: larger than maxJobBytes (handled in the request)`);
      const refused = this.shared.enqueue(job);
      // Its rejection is the receiver's answer, unless the answer is lost on the way (a fault, a crash).
      refused.catch(() => {});
      return refused;
    }
    jobs.observe();
    const before = jobs.jobs.get(id)?.last?.state;
    const result = this.shared.enqueue(job);
    jobs.observe();
    const after = jobs.jobs.get(id)?.last?.state;
    const outcome = before === undefined ? 'added' : before === 'dead' && after !== 'dead' ? 'revived' : 'duplicate';
    countQueue(stats, `enqueue-${outcome}`);
    const what = outcome === 'revived' ? 'revived (a fresh set of tries)' : outcome === 'duplicate' ? `already held (${before})` : outcome;
    trace.add(this.host.id, `queue enqueue ${id} → ${what}`);
    return result;
  }

  private fault(id: string, kind: StoreFaultKind, landedInTime: boolean, minutesLate = false): void {
    const key = { kind: 'delivery', deliveryId: id, work: false } as const;
    this.host.faults.push({ at: Date.now(), op: 'enqueue', key, rawKey: id, token: undefined, kind, landedInTime });
    countFault(this.context.stats, kind === 'crash' ? 'crash-after-queue-call' : `queue-${kind}`);
    if (minutesLate) countFault(this.context.stats, 'queue-lands-minutes-late');
    this.context.trace.add(this.host.id, `queue enqueue ${id}: inject ${kind}`);
  }

  work(process: (job: QueueJob) => Promise<JobResult>, options: { concurrency: number }): QueueWorker {
    const consumer = this.shared.work((job) => this.process(process, job), options);
    this.consumers.push(consumer);
    return consumer;
  }

  /** One job handed to this process's worker, and its answer back to the queue, both through the gate. */
  private process(process: (job: QueueJob) => Promise<JobResult>, job: QueueJob): Promise<JobResult> {
    const { host, context } = this;
    const handover = context.jobs.handedOver(host, job);
    context.trace.add(host.id, `worker gets ${handover.job.id} (try ${job.attempt} of ${job.maxAttempts})`);
    return new Promise<JobResult>((resolve, reject) => {
      host.gate(() => {
        let running: Promise<JobResult>;
        try {
          running = process(job);
        } catch (error) {
          running = Promise.reject(error);
        }
        running.then(
          (result) =>
            host.gate(() => {
              this.settled(handover, result.status, result.status === 'done' ? undefined : result.reason);
              resolve(result);
            }),
          (error: unknown) =>
            host.gate(() => {
              this.settled(handover, 'failed', describeError(error));
              reject(error);
            }),
        );
      });
    });
  }

  private settled(handover: Handover, result: TryResult, reason: string | undefined): void {
    const { jobs, trace, stats, invariants } = this.context;
    const inTime = jobs.settled(handover, result, reason);
    countQueue(stats, `try-${result}`);
    const why = reason === undefined ? '' : `: ${reason}`;
    if (!inTime) {
      trace.add(this.host.id, `worker answers ${result} for ${handover.job.id} too late: the queue took it back already${why}`);
      return;
    }
    trace.add(this.host.id, `worker answers ${result} for ${handover.job.id}${why}`);
    if (result === 'failed') invariants.queue?.tryFailed(handover);
  }

  /** The process crashed: its workers fetch nothing more (the jobs they hold never settle, and stall). */
  stop(): void {
    for (const consumer of this.consumers) void consumer.close();
  }

  deadLetters(options?: { limit?: number }) {
    return this.shared.deadLetters(options);
  }
  replay(letter: DeadLetterRef) {
    return this.shared.replay(letter);
  }
  replayAll() {
    return this.shared.replayAll();
  }
  close() {
    return this.shared.close();
  }
}
