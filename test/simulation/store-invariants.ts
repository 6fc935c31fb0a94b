/**
 * The guarantees judged as store calls land (fault-store.ts tells these checks each one): no two
 * attempts hold one key's lease at once; a key is refused as busy only while an attempt really holds
 * it; a guarded handler's version is in its record before its completion lands or its lock is
 * released; and a version record never moves back. Each also counts the defences it sees act.
 */
import { NAMESPACE } from './context';
import { takenOverAfterLapse, lockTenureOf } from './excuses';
import type { SharedStore } from './fault-store';
import type { Invariants } from './invariants';
import { JudgedRun } from './judged-run';
import { type KeyInfo, versionKey } from './keys';
import type { Tenure } from './leases';
import { handlerOf, type Host, type Run } from './ledger';
import { formatSimTime } from './sim-clock';
import { countDefence } from './stats';
import { describeRun } from './describe';

export class StoreInvariants extends JudgedRun {
  constructor(
    checks: Invariants,
    private readonly store: SharedStore,
  ) {
    super(checks);
  }

  /**
   * A claim acquired `tenure`'s key: no other attempt may hold a live lease on it then (renewed within
   * leaseMs, by what the store answered). The store's contract, as the receivers rely on it.
   */
  acquired(tenure: Tenure, before: Tenure | undefined): void {
    if (before?.endedBy === 'released' && before.info.kind === 'delivery') countDefence(this.stats, 'delivery-claimed-after-release');
    if (before === undefined || before.end !== tenure.from || before.endedBy !== 'taken-over') return;
    const renewed = this.ledger.leases.lastRenewal(before, tenure.from);
    if (tenure.from - renewed >= this.scenario.leaseMs) {
      countDefence(this.stats, `lapsed-${before.info.kind === 'handler' ? 'record' : before.info.kind}-taken-over`);
      const version = before.key.replace(':lock:', ':version:');
      const advanceFailed = before.host.faults.some(
        (fault) => fault.op === 'advanceVersion' && fault.rawKey === version && fault.at >= before.from,
      );
      if (before.info.kind === 'lock' && advanceFailed) countDefence(this.stats, 'lock-left-to-lapse-after-failed-advance');
      return;
    }
    this.fail(
      'lease-held-twice',
      `${tenure.host.id}'s claim acquired ${tenure.key.slice(NAMESPACE.length)}, whose lease ${before.host.id} held (last renewed at ${formatSimTime(renewed)}, leaseMs ${this.scenario.leaseMs} ms)`,
    );
  }

  /**
   * A completion landed (the handler's record, or the delivery's): each write it acknowledges is owed
   * to the final state, unless the lock its run held had been taken over after a lapse by then.
   */
  completed(deliveryId: string, handler: string | undefined, token: string): void {
    const now = Date.now();
    this.versionRecordedBefore(
      'completed',
      token,
      (run) => run.delivery.id === deliveryId && (handler === undefined || run.handler.name === handler),
    );
    for (const run of this.ledger.recordCompletion(deliveryId, handler, this.scenario.handlers, now)) {
      const cause = takenOverAfterLapse(lockTenureOf(run, this.ledger, this.scenario), now, this.ledger, this.scenario);
      if (cause === undefined) {
        this.ledger.raiseAcknowledged(run);
        continue;
      }
      const key = handlerOf(run.delivery.id, run.handler.name);
      if (!this.ledger.notOwed.has(key))
        this.ledger.notOwed.set(key, {
          kind: 'completed-after-lapse',
          cause,
          why: `its completion landed after the lock of ${describeRun(run)} lapsed (${cause}) and was taken over`,
        });
    }
  }

  /** A lock's release landed: the guarded runs its holder made under it have their versions recorded. */
  lockReleased(info: KeyInfo, token: string): void {
    if (info.kind !== 'lock') return;
    this.versionRecordedBefore(
      'released its lock',
      token,
      (run) => run.handler.name === info.handler && run.delivery.resource === info.resource,
    );
  }

  /**
   * The version advances before a guarded handler's record (or its delivery's) is completed, and before
   * its lock is released: each run of the attempt (`token`) that succeeded and wrote has its version
   * in the record by then, so no older delivery can take the lock and run, nor a retry find it completed.
   */
  private versionRecordedBefore(what: string, token: string, concerns: (run: Run) => boolean): void {
    const attempt = this.ledger.attemptsByToken.get(token);
    if (attempt === undefined || this.store === undefined) return;
    for (const run of attempt.runs) {
      if (!run.handler.guarded || run.result !== 'ok' || !run.wrote || !concerns(run)) continue;
      const key = versionKey(NAMESPACE, run.handler.name, run.delivery.resource, this.scenario.handlersRunIn === 'worker');
      const recorded = this.store.readVersion(key);
      if (recorded !== undefined && recorded >= run.delivery.version) continue;
      this.fail(
        'version-advanced-late',
        `${run.host.id} ${what} for ${describeRun(run)}, which succeeded and wrote v${run.delivery.version}, while its version record holds ${recorded === undefined ? 'nothing' : `v${recorded}`}`,
      );
    }
  }

  /**
   * A version advance landed and moved the record: late when the lock it was made under (`lock`) had
   * lapsed and been taken over by then (an exempt case: nothing orders it after the next holder's writes).
   */
  advanced(host: Host, key: string, version: number, lock: Tenure | undefined): void {
    const cause = takenOverAfterLapse(lock, Date.now(), this.ledger, this.scenario);
    const before = this.ledger.versionSetBy.get(key)?.version;
    this.ledger.versionSetBy.set(key, { version, late: cause });
    if (before !== undefined && version < before) {
      this.fail(
        'version-record-went-back',
        `${host.id}'s advance of ${key.slice(NAMESPACE.length)} to v${version} moved the record back from v${before}: a version record only moves forward (compare-and-set)`,
      );
      return;
    }
    if (cause === undefined) return;
    countDefence(this.stats, 'late-advance-after-takeover');
    this.trace.add(
      'check',
      `late version advance: ${host.id}'s advance to v${version} landed after its lock lapsed (${cause}) and was taken over`,
    );
  }

  /**
   * A claim found the key held (`in_progress`), which the receivers answer as busy (409, or a worker's
   * wait): an attempt must really hold its lease.
   */
  claimRefused(key: string, host: Host): void {
    if (this.ledger.leases.live(key, Date.now()) !== undefined) return;
    const last = this.ledger.leases.of(key).at(-1);
    const held =
      last === undefined
        ? 'no attempt ever held it'
        : last.end === undefined
          ? `${last.host.id}'s lease was last renewed at ${formatSimTime(this.ledger.leases.lastRenewal(last, Date.now()))}`
          : `${last.host.id}'s lease ended (${last.endedBy}) at ${formatSimTime(last.end)}`;
    this.fail('refused-while-nobody-holds', `${host.id}'s claim of ${key.slice(NAMESPACE.length)} was refused as in progress, but ${held}`);
  }
}
