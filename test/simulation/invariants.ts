/**
 * The guarantees the receivers must keep, judged against the ledger as each event happens (a run
 * starts, a handler writes, the service is answered), after every step, and at the end of the run.
 * A violation is recorded, not thrown: it may be found inside a receiver's call (a handler, a store
 * call), where a throw would be taken for the handler's own failure. The driver stops at the end of
 * the step that found it. What is judged as store calls land is in store-invariants.ts, what is judged
 * at the end in end-invariants.ts, answer-fast mode's own checks in queue-invariants.ts; when a broken
 * rule is excused, in excuses.ts.
 */
import { LeaseLostError } from '@hookline/core';
import { NAMESPACE } from './context';
import { explainLapse, heartbeatMs, RENEWAL_SLACK_MS, lateWriteCause, overlapCause, rerunCause, takenOverAfterLapse } from './excuses';
import type { SharedStore } from './fault-store';
import { versionKey } from './keys';
import type { Tenure } from './leases';
import { type AttemptRecord, handlerOf, type Host, type Ledger, type OpenRequest, type Run, slotOf } from './ledger';
import { describeRun } from './describe';
import { EndInvariants } from './end-invariants';
import type { QueueInvariants } from './queue-invariants';
import type { StoreInvariants } from './store-invariants';
import { handledInRequest, type Scenario } from './scenario';
import { formatSimTime } from './sim-clock';
import { countDefence, countExcuse, countQueue, type SimStats } from './stats';
import type { Trace } from './trace';

export class InvariantViolation extends Error {
  constructor(
    readonly invariant: string,
    message: string,
  ) {
    super(`${invariant}: ${message}`);
    this.name = 'InvariantViolation';
  }
}

export class Invariants {
  violation: InvariantViolation | undefined;
  /** Answer-fast mode's own checks (queue-invariants.ts), set by the world. */
  queue: QueueInvariants | undefined;
  /** The checks made as store calls land (store-invariants.ts), set by the world. */
  store!: StoreInvariants;
  /** Pairs of runs found running together and excused (a lapse), so the per-step check does not flag them again. */
  private readonly excusedPairs = new Set<string>();
  /** Lapses of a running attempt's leases already judged (per tenure, the renewal it lapsed after). */
  private readonly judgedLapses = new WeakMap<Tenure, number>();

  constructor(
    readonly scenario: Scenario,
    readonly ledger: Ledger,
    readonly stats: SimStats,
    readonly trace: Trace,
  ) {}

  /** Records a violation (the first one only). */
  fail(invariant: string, message: string): void {
    if (this.violation !== undefined) return;
    this.violation = new InvariantViolation(invariant, message);
    this.trace.add('check', `VIOLATION ${this.violation.message}`);
  }

  /**
   * A handler run starts: its attempt holds the delivery's lease; no other run of its delivery, nor of
   * its guard's resource, may be running; nor may it have succeeded before.
   */
  runStarted(run: Run): void {
    const now = Date.now();
    this.holdsLease(run, now);
    for (const other of this.ledger.runsByDelivery.get(run.delivery.id) ?? []) {
      if (other !== run && other.end === undefined) this.overlap('delivery-runs-concurrently', run, other, now);
    }
    if (run.handler.guarded) {
      for (const other of this.ledger.active) {
        if (other === run || other.delivery.id === run.delivery.id || !sameGuard(run, other)) continue;
        this.overlap('resource-runs-concurrently', run, other, now);
      }
    }
    this.checkRerun(run);
  }

  /**
   * A handler runs only under a claim its attempt acquired (its `context.attempt` is that claim's
   * count), whose lease it still holds, or lost only to a lapse the simulation injected.
   */
  private holdsLease(run: Run, now: number): void {
    const { attempt } = run;
    if (attempt === undefined || attempt.claim !== run.claim) {
      this.fail(
        'run-without-lease',
        `${describeRun(run)} started for claim ${run.claim ?? '(none)'} of the delivery, but ${run.host.id} acquired no such claim`,
      );
      return;
    }
    const tenure = this.ledger.leases.held(attempt.key, attempt.token, now);
    if (tenure?.end === undefined || takenOverAfterLapse(tenure, now, this.ledger, this.scenario) !== undefined) return;
    this.fail(
      'run-without-lease',
      `${describeRun(run)} started after its attempt's lease on the delivery ended (${tenure.endedBy} at ${formatSimTime(tenure.end)})${tenure.endedBy === 'taken-over' ? ', and no fault the simulation injected made it lapse' : ''}`,
    );
  }

  private overlap(invariant: string, run: Run, other: Run, now: number): void {
    const sameDelivery = invariant === 'delivery-runs-concurrently';
    const cause = overlapCause(run, other, sameDelivery, now, this.ledger, this.scenario);
    if (cause === undefined) {
      const what = sameDelivery ? `${run.delivery.id}` : `${run.handler.name} on ${run.delivery.resource}`;
      const lease = sameDelivery ? 'the delivery' : 'the lock';
      this.fail(
        invariant,
        `${what}: ${describeRun(run)} started while ${describeRun(other)} has been running since ${formatSimTime(other.start)}, and neither attempt's lease on ${lease} lapsed through a fault the simulation injected (a pause, a crash, failed heartbeats, a run past maxRunMs, a failed store call that gives the key up)`,
      );
      return;
    }
    countExcuse(this.stats, 'overlap-after-lapse', cause);
    this.excusedPairs.add(pairOf(run, other));
    this.trace.add('check', `overlap after a lapse (${cause}): ${describeRun(run)} with ${describeRun(other)}`);
  }

  private checkRerun(run: Run): void {
    const earlier = this.scenario.completion === 'handler' ? this.succeededRun(run) : this.succeededAttempt(run);
    if (earlier === undefined) return;
    const cause = rerunCause(earlier, run, this.ledger, this.scenario);
    if (cause === undefined) {
      const acknowledged = this.ledger.acknowledged.get(handlerOf(run.delivery.id, run.handler.name));
      const why =
        acknowledged === undefined
          ? 'no crash, lapse or store fault touched that attempt before this one claimed it'
          : `its completion landed at ${formatSimTime(acknowledged)}, before this attempt claimed it`;
      this.fail(
        'succeeded-handler-rerun',
        `${describeRun(run)} runs again although ${describeRun(earlier)} succeeded at ${formatSimTime(earlier.end ?? Date.now())}; ${why}`,
      );
      return;
    }
    countExcuse(this.stats, 'rerun', cause);
    this.trace.add(
      'check',
      `rerun after ${cause === 'store' ? 'a store fault' : `a ${cause}`}: ${describeRun(run)} (succeeded before in ${describeRun(earlier)})`,
    );
  }

  /** With per-handler completion: this handler's last successful run for the delivery. */
  private succeededRun(run: Run): Run | undefined {
    const runs = this.ledger.runsByDelivery.get(run.delivery.id) ?? [];
    for (let i = runs.length - 1; i >= 0; i--) {
      const other = runs[i] as Run;
      if (other !== run && other.handler.name === run.handler.name && other.result === 'ok') return other;
    }
    return undefined;
  }

  /** With delivery completion, at the first run of an attempt: the last earlier attempt whose handlers all succeeded (or were stale). */
  private succeededAttempt(run: Run): Run | undefined {
    if (run.attempt !== undefined && run.attempt.runs[0] !== run) return undefined;
    const attempts = this.ledger.attemptsByDelivery.get(run.delivery.id) ?? [];
    for (let i = attempts.length - 1; i >= 0; i--) {
      const attempt = attempts[i] as AttemptRecord;
      if (attempt === run.attempt || !this.allSucceeded(attempt)) continue;
      return attempt.runs.at(-1);
    }
    return undefined;
  }

  private allSucceeded(attempt: AttemptRecord): boolean {
    const done = new Set(attempt.staleSkips);
    for (const other of attempt.runs) if (other.result === 'ok') done.add(other.handler.name);
    return attempt.runs.length > 0 && done.size >= this.scenario.handlers.length;
  }

  /**
   * A guarded handler wrote its version: no newer version whose completion was recorded cleanly may be
   * overwritten, unless this run's own lock was taken over after a lapse before it wrote (its write
   * came late: without fencing, nothing stops it).
   */
  wrote(run: Run): void {
    const now = Date.now();
    run.lateWrite = lateWriteCause(run, now, this.ledger, this.scenario);
    const slot = slotOf(run.handler.name, run.delivery.resource);
    const acknowledged = this.ledger.maxAcknowledged.get(slot);
    if (acknowledged === undefined || acknowledged <= run.delivery.version) return;
    if (run.lateWrite === undefined) {
      const newer = this.ledger.acknowledgedRun.get(slot);
      this.fail(
        'older-version-overwrites-newer',
        `${describeRun(run)} wrote ${run.delivery.resource} = v${run.delivery.version} over v${acknowledged}${newer === undefined ? '' : ` (${describeRun(newer)})`}, whose handler succeeded and whose completion was recorded while it held the lock; this run's lock was not taken over after a lapse`,
      );
      return;
    }
    countExcuse(this.stats, 'late-write', run.lateWrite);
    this.trace.add('check', `late write after a lapse (${run.lateWrite}): ${describeRun(run)} over v${acknowledged}`);
  }

  /**
   * A handler is about to write. Its signal is aborted, if at all, for one of the two reasons the
   * receiver has: a lost lease (LeaseLostError) or the deadline or maxRunMs (a TimeoutError); aborted
   * for anything else, or from the start, a handler that honours it would stop and never finish. And
   * once its receiver was told that a lease of its attempt is gone (an extend answered false), its
   * signal must be aborted, the fence that stops it before it writes over the run that took the lease.
   * (A signal aborted at the deadline stays so: the first reason stands.)
   */
  fenceRaised(run: Run, signal: AbortSignal): void {
    const reason: unknown = signal.reason;
    if (signal.aborted && !LeaseLostError.is(reason) && !(reason instanceof Error && reason.name === 'TimeoutError')) {
      this.fail(
        'signal-aborted-without-cause',
        `${describeRun(run)} is about to write, and its signal is aborted with ${String(reason)}, not for a lost lease or the deadline`,
      );
      return;
    }
    const token = run.attempt?.token;
    const told = token === undefined ? undefined : this.ledger.leaseLossTold.get(token);
    if (told === undefined || signal.aborted) return;
    this.fail(
      'lease-lost-not-aborted',
      `${describeRun(run)} is about to write, but its receiver was told at ${formatSimTime(told)} that a lease of its attempt is gone (an extend answered false), and its signal is not aborted`,
    );
  }

  /** The `stale` hook: a guard skipped a delivery, which is right only when a version at least as new was written. */
  skippedAsStale(deliveryId: string, handler: string, resource: string, version: number, current: number): void {
    countDefence(this.stats, 'stale-skip');
    const written = this.ledger.maxWritten.get(slotOf(handler, resource));
    if (written === undefined || written < version) {
      this.fail(
        'stale-skip-without-newer-state',
        `${handler} skipped ${deliveryId} (v${version}) as stale (the store's version: v${current}), but no handler ever wrote v${version} or newer of ${resource}`,
      );
      return;
    }
    const setBy = this.ledger.versionSetBy.get(versionKey(NAMESPACE, handler, resource, this.scenario.handlersRunIn === 'worker'));
    if (setBy?.late === undefined || setBy.version !== current) return;
    const key = handlerOf(deliveryId, handler);
    if (this.ledger.notOwed.has(key)) return;
    this.ledger.notOwed.set(key, {
      kind: 'skipped-over-late-advance',
      cause: setBy.late,
      why: `its guard skipped it as stale over a late version advance to v${current} (its lock lapsed: ${setBy.late})`,
    });
  }

  /**
   * A receiver answered 2xx to a request that arrived at `arrivedAt`: every handler of the delivery
   * must have succeeded (or been skipped as stale), or one threw PermanentFailure; in answer-fast mode,
   * the queue must hold its job (unless it was too large for the queue, and handled in the request).
   */
  answered2xx(deliveryId: string, status: number, receiver: string, arrivedAt: number): void {
    if (this.queue !== undefined) {
      if (!handledInRequest(this.scenario, deliveryId)) {
        this.queue.answered2xx(deliveryId, status, receiver, arrivedAt);
        return;
      }
      // Too large for the queue: handled in the request, and answered as synchronous mode answers.
      countQueue(this.stats, 'answered-in-request');
    }
    const pending = this.pendingHandlers(deliveryId);
    if (pending.length > 0) {
      this.fail(
        '2xx-before-handlers-done',
        `${receiver} answered ${status} for ${deliveryId} while ${pending.join(', ')} had not succeeded`,
      );
    }
  }

  /**
   * A receiver answers every request by its deadline: handlers still running at `deadlineMs` get a 503
   * while they go on. The bound allows for the claim before them and the record after them (each a
   * store call, bounded by `storeTimeoutMs`), and a second for the network; a process paused meanwhile
   * is excused, since nothing it does moves while it is.
   */
  answered(request: OpenRequest): void {
    this.answerInTime(request, Date.now(), 'answered');
  }

  private answerInTime(request: OpenRequest, now: number, what: 'answered' | 'not answered yet'): void {
    const { host, arrivedAt, label } = request;
    if (now - arrivedAt <= answerBoundMs(this.scenario) || host.crashedAt !== undefined) return;
    if (host.pauses.some((pause) => pause.from <= now && (pause.to ?? Number.POSITIVE_INFINITY) >= arrivedAt)) return;
    this.fail(
      'answer-past-deadline',
      `${host.id} ${what} ${label} ${Math.round((now - arrivedAt) / 1000)} s after it arrived (at ${formatSimTime(arrivedAt)}); deadlineMs ${this.scenario.deadlineMs} ms, and storeTimeoutMs ${this.scenario.storeTimeoutMs} ms for the claim and the record around it`,
    );
  }

  /** The delivery's handlers that have not succeeded (nor skipped as stale), unless one threw PermanentFailure. */
  pendingHandlers(deliveryId: string): string[] {
    const { handlers } = this.scenario;
    if (handlers.some((spec) => this.ledger.permanent.has(handlerOf(deliveryId, spec.name)))) return [];
    return handlers
      .filter((spec) => {
        const key = handlerOf(deliveryId, spec.name);
        return !this.ledger.succeeded.has(key) && !this.ledger.staleSkipped.has(key);
      })
      .map((spec) => spec.name);
  }

  /**
   * After every step: no run belongs to a crashed receiver; every two runs going on together were
   * judged when the later one started; and every lease the attempt of a running handler holds (its
   * delivery's, its handlers' records, its locks) is renewed by every heartbeat (each `leaseMs / 3`,
   * give or take a second), unless an injected fault kept its holder from renewing it (excuses.ts,
   * explainLapse).
   */
  step(): void {
    const now = Date.now();
    for (const request of this.ledger.openRequests) this.answerInTime(request, now, 'not answered yet');
    const runs = [...this.ledger.active];
    for (const run of runs) {
      if (run.host.crashedAt !== undefined)
        this.fail('run-outlives-crash', `${describeRun(run)} is still running after its receiver crashed`);
      else this.leasesKept(run);
    }
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        const a = runs[i] as Run;
        const b = runs[j] as Run;
        const together = a.delivery.id === b.delivery.id || (a.handler.guarded && sameGuard(a, b));
        if (together && !this.excusedPairs.has(pairOf(a, b))) {
          this.fail('runs-concurrently', `${describeRun(a)} and ${describeRun(b)} run together and were never judged`);
        }
      }
    }
  }

  /** At the end of the run (end-invariants.ts). */
  end(store: SharedStore, hosts: readonly Host[]): void {
    new EndInvariants(this, this.queue).check(store, hosts);
  }

  private leasesKept(run: Run): void {
    if (run.attempt === undefined) return;
    const now = Date.now();
    const { leases } = this.ledger;
    for (const tenure of leases.ofToken(run.attempt.token)) {
      if (tenure.end !== undefined) continue;
      const from = leases.lastRenewal(tenure, now);
      const due = from + heartbeatMs(this.scenario.leaseMs) + RENEWAL_SLACK_MS;
      if (now < due || this.judgedLapses.get(tenure) === from) continue;
      this.judgedLapses.set(tenure, from);
      const cause = explainLapse(tenure, { from, at: due }, this.ledger, this.scenario);
      if (cause !== undefined) continue;
      this.fail(
        'lease-not-renewed',
        `${describeRun(run)} is running, but its attempt's lease on ${tenure.key.slice(NAMESPACE.length)} was last renewed at ${formatSimTime(from)}, a heartbeat (leaseMs / 3 = ${heartbeatMs(this.scenario.leaseMs)} ms) and more ago, and nothing the simulation injected kept ${tenure.host.id} from renewing it`,
      );
    }
  }
}

/** How long after a request arrives its answer may come: the deadline, a claim before it and a record after it, a second's slack. */
function answerBoundMs(scenario: Scenario): number {
  return scenario.deadlineMs + 2 * scenario.storeTimeoutMs + 1_000;
}

function sameGuard(a: Run, b: Run): boolean {
  return a.handler.guarded && b.handler.guarded && a.handler.name === b.handler.name && a.delivery.resource === b.delivery.resource;
}

function pairOf(a: Run, b: Run): string {
  return a.id < b.id ? `${a.id}/${b.id}` : `${b.id}/${a.id}`;
}
