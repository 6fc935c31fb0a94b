/**
 * Answer-fast mode's guarantees, judged against the job ledger (what the queue and its workers really
 * did) and the world's ledger (which handlers ran, and how they ended):
 *
 * - `2xx-before-durably-enqueued`: a receiver answers 2xx only once the queue holds the delivery's job,
 *   and not as a dead letter it held before the request arrived (a replay of a dead-lettered delivery
 *   must put it back);
 * - `try-spent-without-failure`: a worker gives a try back as failed (spending it) only when something
 *   really failed in it (a handler threw, a store call was made to fail, its handlers ran to maxRunMs,
 *   its worker was paused); a wait for a busy resource, or for another attempt, is no failure;
 * - `dead-letter-without-failure`: a job is dead-lettered only when each of its tries really failed,
 *   or a handler threw PermanentFailure, or it was corrupt, or it stalled more than `maxStalls` times
 *   (why the queue dead-lettered it is read from the job's `deadKind`, never from its message);
 * - `job-stalled-on-live-worker`: the queue takes a job back only from a worker that crashed or was
 *   paused (a live worker settles every job it was handed, by maxRunMs at the latest);
 * - at the end, `answered-delivery-lost`: every delivery answered 2xx ends handled or dead-lettered
 *   after the last request answered 2xx arrived; `answered-delivery-not-handled`: a job that
 *   completed had every handler succeed (or skip as stale, or throw PermanentFailure).
 */
import { tryFailure } from './excuses';
import type { Invariants } from './invariants';
import { CORRUPT_JOB_ID, type Handover, type JobEvent, type JobLedger, type JobLife, type JobRecord } from './job-ledger';
import type { Ledger } from './ledger';
import type { MemoryJob } from '@hookline/testing';
import type { QueueSetup, Scenario } from './scenario';
import { formatSimTime } from './sim-clock';
import { countQueue, type SimStats } from './stats';
import type { Trace } from './trace';

export class QueueInvariants {
  /** Per delivery: when the last request a receiver answered 2xx arrived. */
  private readonly answeredFrom = new Map<string, number>();

  constructor(
    private readonly scenario: Scenario,
    private readonly setup: QueueSetup,
    private readonly ledger: Ledger,
    private readonly jobs: JobLedger,
    private readonly checks: Invariants,
    private readonly stats: SimStats,
    private readonly trace: Trace,
  ) {}

  /** A receiver answered 2xx to a request that arrived at `arrivedAt`: the queue must hold the job, alive. */
  answered2xx(deliveryId: string, status: number, receiver: string, arrivedAt: number): void {
    this.answeredFrom.set(deliveryId, Math.max(this.answeredFrom.get(deliveryId) ?? arrivedAt, arrivedAt));
    this.jobs.observe();
    const job = this.jobs.jobs.get(deliveryId);
    const life = job?.lives.at(-1);
    if (job?.last === undefined || life === undefined) {
      this.checks.fail(
        '2xx-before-durably-enqueued',
        `${receiver} answered ${status} for ${deliveryId}, but the queue holds no job for it`,
      );
    } else if (job.last.state === 'dead' && (life.deadAt ?? 0) < arrivedAt) {
      this.checks.fail(
        '2xx-before-durably-enqueued',
        `${receiver} answered ${status} for ${deliveryId} (the request arrived at ${formatSimTime(arrivedAt)}), but its job has been a dead letter since ${formatSimTime(life.deadAt ?? 0)} and was not put back in the queue`,
      );
    }
  }

  /** A worker gave a try back as failed, spending it: something must really have failed in it. */
  tryFailed(handover: Handover): void {
    const now = Date.now();
    handover.failure = tryFailure(handover, this.ledger, this.scenario, now);
    if (handover.failure !== undefined) return;
    this.checks.fail(
      'try-spent-without-failure',
      `${handover.host.id} gave try ${handover.attempt} of ${handover.job.id} (handed over at ${formatSimTime(handover.at)}) back as failed (${handover.reason}), but nothing failed in it: no handler threw, no store call of it was made to fail, it did not run to maxRunMs and its worker was not paused`,
    );
  }

  /** What the job ledger saw change in the queue. */
  event(event: JobEvent): void {
    const { job } = event;
    if (event.kind === 'stalled') this.stalled(job, event.handover);
    else if (event.kind === 'miscounted') this.miscounted(job, event.life, event.snapshot, event.spent);
    else if (event.kind === 'dead') this.deadLettered(job, event.life, event.snapshot);
    else this.changed(job, event.kind);
  }

  private changed(job: JobRecord, kind: 'added' | 'revived' | 'completed'): void {
    countQueue(this.stats, `job-${kind}`);
    if (kind !== 'added')
      this.trace.add('queue', `${job.id} ${kind === 'revived' ? 'is back in the queue with a fresh set of tries' : 'is done'}`);
  }

  private stalled(job: JobRecord, handover: Handover): void {
    const now = Date.now();
    const { host } = handover;
    countQueue(this.stats, 'stalled');
    this.trace.add('queue', `takes ${job.id} back from ${host.id}: no answer for ${now - handover.at} ms`);
    const crashed = host.crashedAt !== undefined && host.crashedAt <= now;
    const paused = host.pauses.some((pause) => pause.from <= now && (pause.to ?? Number.POSITIVE_INFINITY) >= handover.at);
    if (crashed || paused) return;
    this.checks.fail(
      'job-stalled-on-live-worker',
      `the queue took ${job.id} back from ${host.id}, which was handed it at ${formatSimTime(handover.at)} and never answered, though it neither crashed nor paused`,
    );
  }

  /** The queue counts more tries than its workers spent: it spent one on a hand-over that did not fail (a wait). */
  private miscounted(job: JobRecord, life: JobLife, snapshot: MemoryJob, spent: number): void {
    this.checks.fail(
      'try-spent-without-failure',
      `the queue counts ${snapshot.attemptsMade} tries of ${job.id} since ${formatSimTime(life.from)}, but only ${spent} of its hand-overs failed; its hand-overs: ${describeHandovers(life.handovers)}`,
    );
  }

  private deadLettered(job: JobRecord, life: JobLife, snapshot: MemoryJob): void {
    const { lastError: reason, attemptsMade, deadKind: kind } = snapshot;
    countQueue(this.stats, `dead-letter-${kind}`);
    this.trace.add('queue', `dead-letters ${job.id} (${attemptsMade} tries counted): ${reason}`);
    const fail = (why: string) => this.checks.fail('dead-letter-without-failure', `${job.id} was dead-lettered (${reason}), but ${why}`);
    if (job.id === CORRUPT_JOB_ID) {
      if (kind !== 'corrupt') fail('it is the corrupt job, which must be dead-lettered as such');
      return;
    }
    if (kind === 'corrupt' || kind === 'unhandled') {
      fail(kind === 'corrupt' ? "its job was the receiver's own, never corrupt" : 'every job has a handler');
      return;
    }
    if (kind === undefined) {
      fail('the queue kept no reason for it (deadKind)');
      return;
    }
    const last = life.handovers.filter((handover) => handover.stalledAt === undefined).at(-1);
    if (kind === 'permanent') {
      const permanent = last?.result === 'dead' && this.ranPermanent(last);
      if (!permanent) fail('no handler threw PermanentFailure in its last try');
      return;
    }
    if (kind === 'stalled') {
      const stalls = life.handovers.filter((handover) => handover.stalledAt !== undefined).length;
      if (stalls <= this.setup.maxStalls) fail(`it stalled ${stalls} times, and maxStalls is ${this.setup.maxStalls}`);
      return;
    }
    const tries = life.handovers.filter((handover) => handover.result === 'failed' && handover.stalledAt === undefined);
    const failed = tries.filter((handover) => handover.failure !== undefined);
    if (failed.length >= this.setup.attempts) return;
    fail(
      `only ${failed.length} of its tries since ${formatSimTime(life.from)} really failed, and the queue makes ${this.setup.attempts}; its hand-overs: ${describeHandovers(life.handovers)}`,
    );
  }

  /** Whether a handler threw PermanentFailure in this hand-over's try. */
  private ranPermanent(handover: Handover): boolean {
    const runs = this.ledger.runsByDelivery.get(handover.job.id) ?? [];
    return runs.some((run) => run.host === handover.host && run.start >= handover.at && run.result === 'permanent');
  }

  /** Whether the delivery's job ended done (its handlers succeeded), as last observed. */
  jobDone(deliveryId: string): boolean {
    return this.jobs.jobs.get(deliveryId)?.last?.state === 'completed';
  }

  /** At the end: every delivery answered 2xx was handled, or dead-lettered after that answer's request. */
  end(): void {
    for (const [deliveryId, arrivedAt] of this.answeredFrom) {
      const job = this.jobs.jobs.get(deliveryId);
      const life = job?.lives.at(-1);
      const state = job?.last?.state;
      if (state === 'completed') {
        const pending = this.checks.pendingHandlers(deliveryId);
        if (pending.length > 0)
          this.checks.fail('answered-delivery-not-handled', `${deliveryId}'s job completed, but ${pending.join(', ')} never succeeded`);
      } else if (state === 'dead') {
        if ((life?.deadAt ?? 0) < arrivedAt)
          this.checks.fail(
            'answered-delivery-lost',
            `${deliveryId} was answered 2xx to a request that arrived at ${formatSimTime(arrivedAt)}, but its job has been a dead letter since ${formatSimTime(life?.deadAt ?? 0)} and never ran again`,
          );
      } else {
        this.checks.fail(
          'answered-delivery-lost',
          `${deliveryId} was answered 2xx, but its job ended the run ${state ?? 'missing from the queue'}`,
        );
      }
    }
    const corrupt = this.jobs.jobs.get(CORRUPT_JOB_ID);
    if (corrupt !== undefined && corrupt.last?.state !== 'dead')
      this.checks.fail('dead-letter-without-failure', `the corrupt job ended the run ${corrupt.last?.state}, not dead-lettered`);
  }
}

function describeHandovers(handovers: readonly Handover[]): string {
  return handovers
    .map((handover) => {
      const at = `${formatSimTime(handover.at)} ${handover.host.id} try ${handover.attempt}`;
      if (handover.stalledAt !== undefined) return `${at}: stalled`;
      if (handover.result !== 'failed') return `${at}: ${handover.result ?? 'running'}`;
      return `${at}: failed (${handover.failure ?? `nothing failed: ${handover.reason}`})`;
    })
    .join('; ');
}
