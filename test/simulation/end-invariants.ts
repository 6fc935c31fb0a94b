/**
 * The guarantees judged once the run has settled: every delivery answered 2xx was handled, and the
 * store holds its completion (the probe claims it once more); each guarded handler's state holds the
 * newest version owed to it; and its version record holds every version completed cleanly.
 */
import { NAMESPACE } from './context';
import { lostCompletionCause } from './excuses';
import type { SharedStore } from './fault-store';
import type { Invariants } from './invariants';
import { JudgedRun } from './judged-run';
import { deliveryKey, versionKey } from './keys';
import { handlerOf, type Host, type NotOwed, slotOf } from './ledger';
import type { QueueInvariants } from './queue-invariants';
import { handledInRequest } from './scenario';
import { countExcuse } from './stats';
import { describeRun } from './describe';

export class EndInvariants extends JudgedRun {
  constructor(
    checks: Invariants,
    private readonly queue: QueueInvariants | undefined,
  ) {
    super(checks);
  }

  /**
   * At the end: every delivery answered 2xx was handled (in answer-fast mode: handled or dead-lettered,
   * queue-invariants.ts), the store holds its completion (`probe`: the memory store itself, claimed
   * once more), and each guarded state holds the newest version owed to it.
   */
  check(store: SharedStore, hosts: readonly Host[]): void {
    this.queue?.end();
    for (const deliveryId of this.ledger.answered2xx) {
      // In answer-fast mode a 2xx says only that the job was queued, unless the delivery was handled in the request.
      if (this.queue !== undefined && !handledInRequest(this.scenario, deliveryId)) continue;
      const pending = this.checks.pendingHandlers(deliveryId);
      if (pending.length > 0)
        this.fail('answered-delivery-not-handled', `${deliveryId} was answered 2xx, but ${pending.join(', ')} never succeeded`);
    }
    this.probe(store, hosts);
    for (const spec of this.scenario.handlers) {
      if (!spec.guarded) continue;
      for (const resource of new Set(this.scenario.deliveries.map((delivery) => delivery.resource))) {
        this.finalState(spec.name, resource);
        this.versionRecord(store, spec.name, resource);
      }
    }
  }

  /**
   * A guarded handler's version record holds at least every version whose completion landed cleanly:
   * its advance landed before that completion, and the record never goes backwards.
   */
  private versionRecord(store: SharedStore, handler: string, resource: string): void {
    const acknowledged = this.ledger.maxAcknowledged.get(slotOf(handler, resource));
    if (acknowledged === undefined) return;
    const recorded = store.readVersion(versionKey(NAMESPACE, handler, resource, this.scenario.handlersRunIn === 'worker'));
    if (recorded !== undefined && recorded >= acknowledged) return;
    this.fail(
      'version-record-behind',
      `${handler}'s version record of ${resource} holds ${recorded === undefined ? 'nothing' : `v${recorded}`} at the end, but v${acknowledged} was completed by a run that held the lock throughout`,
    );
  }

  /**
   * Claims every delivery the service was answered 2xx for as handled (or as a duplicate), or whose
   * job is done, in the memory store itself: it must answer completed, unless a named fault lost the
   * completion (its complete failed, or its lease lapsed and was taken over, so the complete answered false).
   */
  private probe(store: SharedStore, hosts: readonly Host[]): void {
    const worker = this.scenario.handlersRunIn === 'worker';
    for (const delivery of this.scenario.deliveries) {
      const answered = this.ledger.answers.get(delivery.id);
      const queued = worker && !handledInRequest(this.scenario, delivery.id);
      const owed = queued ? this.queue?.jobDone(delivery.id) === true : answered?.has('handled') || answered?.has('duplicate');
      if (!owed) continue;
      const key = deliveryKey(NAMESPACE, delivery.id, worker);
      const found = store.claim(key, 'simulation-probe', this.scenario.leaseMs);
      if (found.state === 'completed') continue;
      const cause = lostCompletionCause(delivery.id, hosts, this.ledger, this.scenario);
      if (cause !== undefined) {
        countExcuse(this.stats, 'completion-lost', cause.startsWith('its complete') ? 'store' : 'lapse');
        this.trace.add('check', `probe: ${delivery.id} is not completed in the store (${found.state}), as ${cause}`);
        continue;
      }
      const what = queued ? 'its job is done' : `the service was answered ${[...(answered ?? [])].join(', ')}`;
      this.fail(
        'answered-delivery-not-completed',
        `${delivery.id}: ${what}, but the store answers a claim of its record with ${found.state}; no complete of it was made to fail and no lease of it lapsed`,
      );
    }
  }

  /** The state of one guarded handler's resource at the end: at least the newest version owed, unless the run that wrote last came late. */
  private finalState(handler: string, resource: string): void {
    const slot = slotOf(handler, resource);
    const { owed, exempt } = this.newestOwed(handler, resource);
    const last = this.ledger.lastWritten.get(slot) ?? Number.NEGATIVE_INFINITY;
    if (exempt !== undefined && exempt.version > last && (owed === undefined || owed <= last)) {
      // The state lacks a version only an exemption lets it lack: count the exemption as used.
      countExcuse(this.stats, exempt.notOwed.kind, exempt.notOwed.cause);
      this.trace.add('check', `${handler} left ${resource} under v${exempt.version}, which is not owed: ${exempt.notOwed.why}`);
    }
    if (owed === undefined || last >= owed) return;
    const writer = this.ledger.lastWriter.get(slot);
    if (writer?.lateWrite !== undefined) {
      countExcuse(this.stats, 'late-write-last', writer.lateWrite);
      this.trace.add(
        'check',
        `${handler} left ${resource} = v${last} under v${owed}: ${describeRun(writer)} wrote last, late (${writer.lateWrite})`,
      );
      return;
    }
    this.fail(
      'last-state-not-newest',
      `${handler} left ${resource} = ${writer === undefined ? 'nothing' : `v${last}`}, but v${owed} was answered 2xx and its handler succeeded${writer === undefined ? '' : `; ${describeRun(writer)} wrote last, and its lock was not taken over after a lapse`}`,
    );
  }

  /**
   * The newest version of `resource` answered 2xx whose `handler` succeeded (or was skipped as stale),
   * leaving out a delivery whose last run of the handler threw PermanentFailure: it gave its change up.
   * In answer-fast mode a 2xx says only that the job was queued: a delivery counts once its job is done,
   * or once the handler's completion was recorded. A job dead-lettered before then gave its change up
   * too (a write of its that was never acknowledged may have been overwritten, and no retry comes).
   * Nor is a version whose completion came after its lock lapsed and was taken over, or that its guard
   * skipped over a late version advance (`ledger.notOwed`): both are the protocol's exemptions.
   */
  private newestOwed(
    handler: string,
    resource: string,
  ): { owed: number | undefined; exempt: { version: number; notOwed: NotOwed } | undefined } {
    let owed: number | undefined;
    let exempt: { version: number; notOwed: NotOwed } | undefined;
    for (const delivery of this.scenario.deliveries) {
      const key = handlerOf(delivery.id, handler);
      if (delivery.resource !== resource || !this.ledger.answered2xx.has(delivery.id)) continue;
      // A 2xx that said only that a handler failed for good gave the change up, whatever a later repeat ran.
      const answers = this.ledger.answers.get(delivery.id);
      const queued = this.queue !== undefined && !handledInRequest(this.scenario, delivery.id);
      const promised = queued || answers?.has('handled') || answers?.has('duplicate');
      if (!promised && !this.ledger.acknowledged.has(key)) continue;
      if (!this.ledger.succeeded.has(key) && !this.ledger.staleSkipped.has(key)) continue;
      if (queued && !this.queue?.jobDone(delivery.id) && !this.ledger.acknowledged.has(key)) continue;
      const runs = (this.ledger.runsByDelivery.get(delivery.id) ?? []).filter(
        (run) => run.handler.name === handler && run.result !== undefined,
      );
      if (runs.at(-1)?.result === 'permanent') continue;
      const notOwed = this.ledger.notOwed.get(key);
      if (notOwed === undefined) owed = Math.max(owed ?? 0, delivery.version);
      else if (delivery.version > (exempt?.version ?? Number.NEGATIVE_INFINITY)) exempt = { version: delivery.version, notOwed };
    }
    return { owed, exempt };
  }
}
