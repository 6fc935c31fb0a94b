/**
 * Answer-fast mode's record of the queue: every hand-over of a job to a worker and what the worker
 * made of it, and the job's life in the queue as the world observed it (added, dead-lettered,
 * revived, completed; a hand-over the queue took back because its worker went silent). The queue's
 * own counts (`attemptsMade`) are not trusted: the invariants compare them with what really happened.
 *
 * The world observes the shared queue after every step and around every enqueue and hand-over, so a
 * change of state is seen at the simulated time it happened.
 */
import type { JobResult, QueueJob } from '@hookline/core/adapter';
import type { MemoryJob, MemoryQueue } from '@hookline/testing';
import type { Incarnation } from './incarnation';

/** The id of the job that is not JSON at all (what a corrupt or foreign job looks like), and its text. */
export const CORRUPT_JOB_ID = 'wdl_sim_corrupt';
export const CORRUPT_JOB_TEXT = '{"delivery": {"deliveryId": "wdl_sim_corrupt", "data": ';

export type TryResult = JobResult['status'] | 'failed';

/** One hand-over of a job to a worker's processor: a try, a wait, or one the queue took back (stalled). */
export interface Handover {
  readonly job: JobRecord;
  readonly host: Incarnation;
  readonly at: number;
  /** The try the queue said this was (`QueueJob.attempt`). */
  readonly attempt: number;
  /** The queue's count of hand-overs of the job, this one included: a later one means this one was taken back. */
  readonly run: number;
  result: TryResult | undefined;
  /** The dead letter's or the wait's reason, or the failed try's error. */
  reason: string | undefined;
  settledAt: number | undefined;
  /** When the queue took the job back from this hand-over, its worker silent (crashed, or paused) for stalledAfterMs. */
  stalledAt: number | undefined;
  /** For a failed try: what really failed in it (excuses.ts, `tryFailure`), or undefined when nothing did. */
  failure: string | undefined;
  /** Whether the queue got its answer in time and it spends a try (a failure, or a dead letter). */
  spendsTry: boolean;
}

/** A job from when it was added (or revived) to its dead letter, if it got one. */
export interface JobLife {
  readonly from: number;
  readonly handovers: Handover[];
  deadAt: number | undefined;
  deadReason: string | undefined;
}

export interface JobRecord {
  /** The queue's id: the scoped deliveryId. */
  readonly id: string;
  /** The planned delivery, undefined for the corrupt job. */
  readonly deliveryId: string | undefined;
  readonly lives: JobLife[];
  /** As last observed. */
  last: MemoryJob | undefined;
  /** Hand-overs neither settled nor taken back yet. */
  readonly open: Set<Handover>;
  /** The queue's count of tries last found above the tries really spent, so it is reported once. */
  miscounted: number;
}

export type JobEvent =
  | { readonly kind: 'added' | 'revived' | 'completed'; readonly job: JobRecord }
  | { readonly kind: 'dead'; readonly job: JobRecord; readonly life: JobLife; readonly snapshot: MemoryJob }
  | { readonly kind: 'stalled'; readonly job: JobRecord; readonly handover: Handover }
  | { readonly kind: 'miscounted'; readonly job: JobRecord; readonly life: JobLife; readonly snapshot: MemoryJob; readonly spent: number };

export class JobLedger {
  readonly jobs = new Map<string, JobRecord>();
  /** Called for every change observed, in order. */
  onEvent: (event: JobEvent) => void = () => {};

  constructor(private readonly queue: MemoryQueue) {}

  /** Compares the queue with what was last seen and reports each change. */
  observe(): void {
    const now = Date.now();
    for (const snapshot of this.queue.jobs()) {
      let job = this.jobs.get(snapshot.id);
      if (job === undefined) {
        job = {
          id: snapshot.id,
          deliveryId: snapshot.id === CORRUPT_JOB_ID ? undefined : snapshot.id,
          lives: [{ from: now, handovers: [], deadAt: undefined, deadReason: undefined }],
          last: undefined,
          open: new Set(),
          miscounted: 0,
        };
        this.jobs.set(job.id, job);
        this.onEvent({ kind: 'added', job });
      }
      const previous = job.last;
      job.last = snapshot;
      // Taken back first: a job that stalled once too often is dead-lettered at the same moment.
      for (const handover of [...job.open]) {
        if (snapshot.state === 'active' && snapshot.runs === handover.run) continue;
        job.open.delete(handover);
        handover.stalledAt = now;
        this.onEvent({ kind: 'stalled', job, handover });
      }
      if (previous?.state === 'dead' && snapshot.state !== 'dead') {
        job.lives.push({ from: now, handovers: [], deadAt: undefined, deadReason: undefined });
        this.onEvent({ kind: 'revived', job });
      }
      if (snapshot.state === 'dead' && previous?.state !== 'dead') {
        const life = job.lives.at(-1) as JobLife;
        life.deadAt = now;
        life.deadReason = snapshot.lastError;
        this.onEvent({ kind: 'dead', job, life, snapshot });
      }
      if (snapshot.state === 'completed' && previous?.state !== 'completed') this.onEvent({ kind: 'completed', job });
      // The queue's count of tries against the hand-overs that really spent one since the job was (re)enqueued.
      const life = job.lives.at(-1) as JobLife;
      const spent = life.handovers.filter((handover) => handover.spendsTry).length;
      if (snapshot.attemptsMade > spent && snapshot.attemptsMade !== job.miscounted) {
        job.miscounted = snapshot.attemptsMade;
        this.onEvent({ kind: 'miscounted', job, life, snapshot, spent });
      }
    }
  }

  /** A worker's processor got a job. */
  handedOver(host: Incarnation, job: QueueJob): Handover {
    this.observe();
    const id = jobIdOf(job.payload);
    const record = this.jobs.get(id);
    if (record === undefined) throw new Error(`the simulation lost track of the queue: job ${id} was handed over before it was seen`);
    const handover: Handover = {
      job: record,
      host,
      at: Date.now(),
      attempt: job.attempt,
      run: record.last?.runs ?? 0,
      result: undefined,
      reason: undefined,
      settledAt: undefined,
      stalledAt: undefined,
      failure: undefined,
      spendsTry: false,
    };
    (record.lives.at(-1) as JobLife).handovers.push(handover);
    record.open.add(handover);
    return handover;
  }

  /** The processor settled (its answer passed its process's gate); false when the queue had taken the job back already. */
  settled(handover: Handover, result: TryResult, reason: string | undefined): boolean {
    handover.settledAt = Date.now();
    handover.result = result;
    handover.reason = reason;
    const inTime = handover.job.open.delete(handover);
    handover.spendsTry = inTime && (result === 'failed' || result === 'dead');
    return inTime;
  }

  /** The current life of a delivery's job, if the queue ever held it. */
  lifeOf(deliveryId: string): JobLife | undefined {
    return this.jobs.get(deliveryId)?.lives.at(-1);
  }
}

/** The queue's id of a job a worker got: its scoped deliveryId (no tenants here), or the corrupt job's. */
function jobIdOf(payload: unknown): string {
  const id = (payload as { delivery?: { deliveryId?: unknown } } | null)?.delivery?.deliveryId;
  return typeof payload === 'object' && typeof id === 'string' ? id : CORRUPT_JOB_ID;
}
