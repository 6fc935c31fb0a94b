/**
 * The guarantees the receivers must keep, judged against the ledger as each event happens (a run
 * starts, a handler writes, the service is answered), after every step, and at the end of the run.
 * A violation is recorded, not thrown: it may be found inside a receiver's call (a handler, a store
 * call), where a throw would be taken for the handler's own failure. The driver stops at the end of
 * the step that found it.
 */
import { type LapseCause, lapseOf, type RerunCause, rerunCause } from './excuses';
import { type AttemptRecord, handlerOf, type Ledger, type Run, slotOf } from './ledger';
import type { QueueInvariants } from './queue-invariants';
import type { Scenario } from './scenario';
import { formatSimTime } from './sim-clock';
import type { SimStats } from './stats';
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
  /** Pairs of runs found running together and excused (a lapse), so the per-step check does not flag them again. */
  private readonly excusedPairs = new Set<string>();

  constructor(
    private readonly scenario: Scenario,
    private readonly ledger: Ledger,
    private readonly stats: SimStats,
    private readonly trace: Trace,
  ) {}

  /** Records a violation (the first one only). */
  fail(invariant: string, message: string): void {
    if (this.violation !== undefined) return;
    this.violation = new InvariantViolation(invariant, message);
    this.trace.add('check', `VIOLATION ${this.violation.message}`);
  }

  /** A handler run starts: no other run of its delivery, nor of its guard's resource, may be running; nor may it have succeeded before. */
  runStarted(run: Run): void {
    const now = Date.now();
    for (const other of this.ledger.runsByDelivery.get(run.delivery.id) ?? []) {
      if (other !== run && other.end === undefined) this.overlap('delivery-runs-concurrently', run, other, now);
    }
    if (run.handler.guarded) {
      for (const other of this.ledger.active) {
        if (other === run || other.delivery.id === run.delivery.id || !sameGuard(run, other)) continue;
        this.overlap('resource-runs-concurrently', run, other, now);
      }
    }
    this.checkRerun(run, now);
  }

  private overlap(invariant: string, run: Run, other: Run, now: number): void {
    const cause = lapseOf(other, now, this.scenario) ?? lapseOf(run, now, this.scenario);
    if (cause === undefined) {
      const what = invariant === 'delivery-runs-concurrently' ? `${run.delivery.id}` : `${run.handler.name} on ${run.delivery.resource}`;
      this.fail(
        invariant,
        `${what}: ${describeRun(run)} started while ${describeRun(other)} has been running since ${formatSimTime(other.start)}, and no fault was injected into either attempt (no pause, no failed extend, not past maxRunMs)`,
      );
      return;
    }
    this.stats.overlapsAfterLapse += 1;
    this.excusedPairs.add(pairOf(run, other));
    if (run.handler.guarded) this.ledger.tainted.add(slotOf(run.handler.name, run.delivery.resource));
    this.trace.add('check', `overlap after a lapse (${cause}): ${describeRun(run)} with ${describeRun(other)}`);
  }

  private checkRerun(run: Run, now: number): void {
    const earlier = this.scenario.completion === 'handler' ? this.succeededRun(run) : this.succeededAttempt(run);
    if (earlier === undefined) return;
    const cause = rerunCause(earlier, now, this.scenario);
    if (cause === undefined) {
      this.fail(
        'succeeded-handler-rerun',
        `${describeRun(run)} runs again although ${describeRun(earlier)} succeeded at ${formatSimTime(earlier.end ?? now)} and no crash, lapse or store fault touched that attempt`,
      );
      return;
    }
    countRerun(this.stats, cause);
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
   * A guarded handler wrote its version: no newer version whose completion was recorded may be
   * overwritten. Excused when the writer's attempt lapsed, or when the newer one's had lapsed by the
   * time the writer started (paused before it advanced the version, it let the writer take the lock
   * and read the old version).
   */
  wrote(run: Run): void {
    const slot = slotOf(run.handler.name, run.delivery.resource);
    const acknowledged = this.ledger.maxAcknowledged.get(slot);
    if (acknowledged === undefined || acknowledged <= run.delivery.version) return;
    const now = Date.now();
    const newer = this.ledger.acknowledgedRun.get(slot);
    const cause: LapseCause | undefined =
      lapseOf(run, now, this.scenario) ?? (newer === undefined ? undefined : lapseOf(newer, run.start, this.scenario));
    if (cause === undefined) {
      this.fail(
        'older-version-overwrites-newer',
        `${describeRun(run)} wrote ${run.delivery.resource} = v${run.delivery.version} over v${acknowledged}, whose handler succeeded and whose completion was recorded; no fault was injected into this attempt`,
      );
      return;
    }
    this.stats.staleWritesAfterLapse += 1;
    this.ledger.tainted.add(slot);
    this.trace.add('check', `stale write after a lapse (${cause}): ${describeRun(run)} over v${acknowledged}`);
  }

  /** The `stale` hook: a guard skipped a delivery, which is right only when a version at least as new was written. */
  skippedAsStale(deliveryId: string, handler: string, resource: string, version: number, current: number): void {
    const written = this.ledger.maxWritten.get(slotOf(handler, resource));
    if (written === undefined || written < version) {
      this.fail(
        'stale-skip-without-newer-state',
        `${handler} skipped ${deliveryId} (v${version}) as stale (the store's version: v${current}), but no handler ever wrote v${version} or newer of ${resource}`,
      );
    }
  }

  /**
   * A receiver answered 2xx to a request that arrived at `arrivedAt`: every handler of the delivery
   * must have succeeded (or been skipped as stale), or one threw PermanentFailure; in answer-fast mode,
   * the queue must hold its job.
   */
  answered2xx(deliveryId: string, status: number, receiver: string, arrivedAt: number): void {
    if (this.queue !== undefined) {
      this.queue.answered2xx(deliveryId, status, receiver, arrivedAt);
      return;
    }
    const pending = this.pendingHandlers(deliveryId);
    if (pending.length > 0) {
      this.fail(
        '2xx-before-handlers-done',
        `${receiver} answered ${status} for ${deliveryId} while ${pending.join(', ')} had not succeeded`,
      );
    }
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

  /** After every step: every two runs going on together were judged when the later one started. */
  step(): void {
    const runs = [...this.ledger.active];
    for (const run of runs) {
      if (run.host.crashedAt !== undefined)
        this.fail('run-outlives-crash', `${describeRun(run)} is still running after its receiver crashed`);
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

  /**
   * At the end: every delivery answered 2xx was handled (in answer-fast mode: handled or dead-lettered,
   * queue-invariants.ts), and each guarded state holds the newest version answered.
   */
  end(): void {
    this.queue?.end();
    for (const deliveryId of this.queue === undefined ? this.ledger.answered2xx : []) {
      const pending = this.pendingHandlers(deliveryId);
      if (pending.length > 0)
        this.fail('answered-delivery-not-handled', `${deliveryId} was answered 2xx, but ${pending.join(', ')} never succeeded`);
    }
    for (const spec of this.scenario.handlers) {
      if (!spec.guarded) continue;
      for (const resource of new Set(this.scenario.deliveries.map((delivery) => delivery.resource))) {
        const slot = slotOf(spec.name, resource);
        const expected = this.newestHandled(spec.name, resource);
        const last = this.ledger.lastWritten.get(slot);
        if (expected === undefined || this.ledger.tainted.has(slot) || (last !== undefined && last >= expected)) continue;
        this.fail(
          'last-state-not-newest',
          `${spec.name} left ${resource} = ${last === undefined ? 'nothing' : `v${last}`}, but v${expected} was answered 2xx and its handler succeeded`,
        );
      }
    }
  }

  /**
   * The newest version of `resource` answered 2xx whose `handler` succeeded (or was skipped as stale),
   * leaving out a delivery whose last run of the handler threw PermanentFailure: it gave its change up.
   * In answer-fast mode a 2xx says only that the job was queued: a delivery counts once its job is done,
   * or once the handler's completion was recorded. A job dead-lettered before then gave its change up
   * too (a write of its that was never acknowledged may have been overwritten, and no retry comes).
   */
  private newestHandled(handler: string, resource: string): number | undefined {
    let newest: number | undefined;
    for (const delivery of this.scenario.deliveries) {
      const key = handlerOf(delivery.id, handler);
      if (delivery.resource !== resource || !this.ledger.answered2xx.has(delivery.id)) continue;
      if (!this.ledger.succeeded.has(key) && !this.ledger.staleSkipped.has(key)) continue;
      if (this.queue !== undefined && !this.queue.jobDone(delivery.id) && !this.ledger.acknowledged.has(key)) continue;
      const runs = (this.ledger.runsByDelivery.get(delivery.id) ?? []).filter(
        (run) => run.handler.name === handler && run.result !== undefined,
      );
      if (runs.at(-1)?.result === 'permanent') continue;
      newest = Math.max(newest ?? 0, delivery.version);
    }
    return newest;
  }
}

function sameGuard(a: Run, b: Run): boolean {
  return a.handler.guarded && b.handler.guarded && a.handler.name === b.handler.name && a.delivery.resource === b.delivery.resource;
}

function pairOf(a: Run, b: Run): string {
  return a.id < b.id ? `${a.id}/${b.id}` : `${b.id}/${a.id}`;
}

function countRerun(stats: SimStats, cause: RerunCause): void {
  if (cause === 'crash') stats.rerunsAfterCrash += 1;
  else if (cause === 'lapse') stats.rerunsAfterLapse += 1;
  else stats.rerunsAfterStoreFault += 1;
}

export function describeRun(run: Run): string {
  return `${run.handler.name} of ${run.delivery.id} (${run.delivery.resource} v${run.delivery.version}) on ${run.host.id}`;
}
