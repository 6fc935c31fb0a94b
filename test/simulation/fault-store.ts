/**
 * One receiver's view of the shared store, with faults. Each call either answers at once (as the
 * memory store does), where it may fail or crash its caller right after it landed, or travels over
 * the network with the faults of network.ts (fail, lost answer, slow, hang, crash after it landed).
 *
 * A crashed receiver's calls never reach the store; a paused one's wait until it resumes, and answers
 * that arrive while it is paused wait too.
 */
import type { ClaimResult, IdempotencyStore } from '@hookline/core';
import { NAMESPACE, type SimContext } from './context';
import type { Incarnation } from './incarnation';
import { type KeyInfo, parseKey } from './keys';
import type { Tenure } from './leases';
import type { StoreFaultKind } from './ledger';
import { overTheNetwork } from './network';
import type { StoreOutage } from './scenario';
import { SIM_EPOCH } from './sim-clock';
import { countDefence, countFault } from './stats';
import { never } from './never';

/** The shared store every receiver's wrapper calls: the memory store, or a mutant of it. */
export interface SharedStore {
  claim(key: string, token: string, leaseMs: number): ClaimResult;
  complete(key: string, token: string, retentionMs: number): boolean;
  release(key: string, token: string): boolean;
  extend(key: string, token: string, leaseMs: number): boolean;
  readVersion(key: string): number | undefined;
  advanceVersion(key: string, version: number, retentionMs: number): boolean;
}

type Operation = keyof SharedStore;

export class FaultStore implements IdempotencyStore {
  constructor(
    private readonly context: SimContext,
    private readonly host: Incarnation,
    private readonly shared: SharedStore,
  ) {}

  claim(key: string, token: string, leaseMs: number) {
    return this.call('claim', key, token, () => this.shared.claim(key, token, leaseMs));
  }
  complete(key: string, token: string, retentionMs: number) {
    return this.call('complete', key, token, () => this.shared.complete(key, token, retentionMs));
  }
  release(key: string, token: string) {
    return this.call('release', key, token, () => this.shared.release(key, token));
  }
  extend(key: string, token: string, leaseMs: number) {
    const madeAt = Date.now();
    const answer = this.call('extend', key, token, () => this.shared.extend(key, token, leaseMs));
    // An extend that answers false in time tells the receiver the lease is gone: from then on the
    // attempt's handlers must find their signal aborted (invariants.ts, fenceRaised).
    const told = (owned: boolean) => {
      const { ledger, scenario } = this.context;
      if (owned || Date.now() - madeAt >= scenario.storeTimeoutMs || ledger.leaseLossTold.has(token)) return;
      ledger.leaseLossTold.set(token, Date.now());
    };
    if (answer instanceof Promise) answer.then(told, () => {});
    else told(answer);
    return answer;
  }
  readVersion(key: string) {
    return this.call('readVersion', key, undefined, () => this.shared.readVersion(key));
  }
  advanceVersion(key: string, version: number, retentionMs: number) {
    // The lock the advancing attempt took (it may have lapsed and been taken over by now, even by another
    // attempt of this very process): a late landing is judged against it.
    const under = this.lockOf(key.replace(':version:', ':lock:'), version);
    return this.call('advanceVersion', key, undefined, () => this.shared.advanceVersion(key, version, retentionMs), {
      version,
      lock: under,
    });
  }

  /** The last tenure of `lock` this process took for an attempt of a delivery of `version`, or else its last one. */
  private lockOf(lock: string, version: number): Tenure | undefined {
    const { ledger } = this.context;
    const mine = ledger.leases.of(lock).filter((tenure) => tenure.host === this.host);
    for (let i = mine.length - 1; i >= 0; i--) {
      const attempt = ledger.attemptsByToken.get((mine[i] as Tenure).token);
      if (attempt !== undefined && this.context.delivery(attempt.deliveryId).version === version) return mine[i];
    }
    return mine.at(-1);
  }

  private call<T>(
    operation: Operation,
    key: string,
    token: string | undefined,
    perform: () => T,
    advance?: Advance,
    madeAt = Date.now(),
  ): T | Promise<T> {
    const { host } = this;
    if (host.crashed) return never();
    if (host.paused) {
      // A paused process sends nothing: the call goes out when it resumes (its time limit runs meanwhile).
      return new Promise<T>((resolve, reject) =>
        host.gate(() => new Promise<T>((sent) => sent(this.call(operation, key, token, perform, advance, madeAt))).then(resolve, reject)),
      );
    }
    const { random, scenario } = this.context;
    const info = parseKey(key, NAMESPACE);
    const call: Call = { operation, key, token, info, advance, madeAt, faulted: false };
    const outage = this.context.storeOutage(host);
    if (outage !== undefined) return this.cutOff(call, perform, outage);
    if (host.stalledUntil !== undefined && Date.now() < host.stalledUntil) return this.stalled(call, perform, host.stalledUntil);
    const crashAfter = this.context.mayCrashNow(scenario.rates.crashAfterStoreCall);
    if (random.chance(scenario.rates.syncStore)) {
      if (random.chance(scenario.rates.storeFault)) {
        this.fault(call, 'fail', false);
        throw new Error(`simulated store failure (${operation})`);
      }
      const value = this.land(call, perform);
      if (crashAfter) {
        this.fault(call, 'crash', true);
        this.context.crash(host, `right after its ${operation} of ${short(key)} landed`);
        return never();
      }
      this.answered(call);
      return value;
    }
    const answer = overTheNetwork(this.context, host, {
      land: () => this.land(call, perform),
      fault: (kind, landedInTime, minutesLate) => this.fault(call, kind, landedInTime, minutesLate),
      crashAfter,
      server: 'store',
      operation,
      what: `${operation} of ${short(key)}`,
    });
    answer.then(
      () => this.answered(call),
      () => this.answered(call),
    );
    return answer;
  }

  /**
   * The caller got its answer: past storeTimeoutMs (its process was paused while the call was out, or
   * before it went out), the caller took it for a failure, as it would a fault: the ledger records it
   * as one, not injected but caused by the pause.
   */
  private answered(call: Call): void {
    if (call.faulted || Date.now() - call.madeAt < this.context.scenario.storeTimeoutMs) return;
    const { operation, key, token, info } = call;
    this.host.faults.push({ at: call.madeAt, op: operation, key: info, rawKey: key, token, kind: 'paused', landedInTime: false });
    this.context.trace.add(this.host.id, `store ${operation} ${short(key)}: answered after storeTimeoutMs (the process was paused)`);
  }

  /**
   * A call while the store cannot be reached: refused (it fails after a network round trip and never
   * lands), or lost in a partition (no answer ever; it lands when the partition heals, or never).
   */
  private cutOff<T>(call: Call, perform: () => T, outage: StoreOutage): Promise<T> {
    const { random } = this.context;
    const { host } = this;
    if (outage.kind === 'refused') {
      this.fault(call, 'fail', false, false, 'store-outage-call');
      return new Promise<T>((_, reject) =>
        setTimeout(
          () => host.gate(() => reject(new Error(`simulated store outage (${call.operation}): connection refused`))),
          random.int(1, 20),
        ),
      );
    }
    this.fault(call, 'hang', false, false, 'store-outage-call');
    if (random.chance(0.5)) {
      const healsIn = SIM_EPOCH + outage.at + outage.durationMs - Date.now();
      setTimeout(() => this.land(call, perform), healsIn + random.int(0, 20));
    }
    return new Promise<T>(() => {});
  }

  /** A call on a stalled connection: no answer ever; it lands when the connection recovers, or (mostly) minutes later. */
  private stalled<T>(call: Call, perform: () => T, until: number): Promise<T> {
    const { random } = this.context;
    const lateBy = random.chance(0.3) ? random.int(0, 20) : random.int(60_000, 600_000);
    this.fault(call, 'hang', false, false, 'store-stalled-call');
    setTimeout(() => this.land(call, perform), until - Date.now() + lateBy);
    return new Promise<T>(() => {});
  }

  /** Performs the call on the shared store and tells the ledger what landed: the leases it took, renewed or gave up, and the completions. */
  private land<T>(call: Call, perform: () => T): T {
    const value = perform();
    const { operation, key, token, info } = call;
    const { ledger, scenario, trace, invariants } = this.context;
    const now = Date.now();
    trace.add(this.host.id, `store ${operation} ${short(key)} → ${describe(value)}`);
    if (call.advance !== undefined) {
      if (value === true) invariants.store.advanced(this.host, key, call.advance.version, call.advance.lock);
      else if ((ledger.versionSetBy.get(key)?.version ?? Number.NEGATIVE_INFINITY) > call.advance.version)
        countDefence(this.context.stats, 'older-version-refused');
    }
    if (operation === 'claim' && token !== undefined) {
      const claim = value as ClaimResult;
      if (claim.state === 'acquired') {
        const before = ledger.leases.of(key).at(-1);
        invariants.store.acquired(ledger.leases.acquired(key, info, token, this.host, now), before);
      }
      if (claim.state === 'in_progress') {
        countDefence(this.context.stats, `busy-${kindOf(info)}`);
        const holder = ledger.leases.live(key, now);
        if (holder !== undefined && now >= holder.from + scenario.leaseMs) countDefence(this.context.stats, 'held-by-renewal');
        invariants.store.claimRefused(key, this.host);
      }
    } else if ((operation === 'extend' || operation === 'complete' || operation === 'release') && token !== undefined) {
      ledger.leases.landed(operation, key, token, value === true, now);
      if (operation === 'extend' && value === true) {
        countDefence(this.context.stats, `renewed-${kindOf(info)}`);
        const attempt = ledger.attemptsByToken.get(token);
        if (attempt !== undefined && scenario.handlersRunIn === 'receiver' && now - attempt.claimedAt > scenario.deadlineMs)
          countDefence(this.context.stats, 'renewed-past-deadline');
      }
      if (operation === 'release' && value === true) invariants.store.lockReleased(info, token);
    }
    // The records the handlers' outcome is kept under: a receipt's, or (answer-fast mode) a worker's.
    if ((info.kind === 'delivery' || info.kind === 'handler') && info.work !== (scenario.handlersRunIn === 'worker')) return value;
    if (operation === 'claim' && info.kind === 'delivery' && token !== undefined && (value as ClaimResult).state === 'acquired') {
      ledger.claimAcquired(this.host, info.deliveryId, key, token, now, (value as ClaimResult & { state: 'acquired' }).attempt);
    }
    if (operation === 'complete' && value === true && token !== undefined && (info.kind === 'delivery' || info.kind === 'handler')) {
      invariants.store.completed(info.deliveryId, info.kind === 'handler' ? info.handler : undefined, token);
    }
    return value;
  }

  private fault(call: Call, kind: StoreFaultKind, landedInTime: boolean, minutesLate = false, counted?: string): void {
    const { operation, key, token, info } = call;
    call.faulted = true;
    this.host.faults.push({ at: Date.now(), op: operation, key: info, rawKey: key, token, kind, landedInTime });
    countFault(this.context.stats, counted ?? (kind === 'crash' ? 'crash-after-store-call' : `store-${kind}`));
    if (minutesLate) countFault(this.context.stats, 'store-lands-minutes-late');
    const late = minutesLate ? ' (it lands minutes late)' : '';
    this.context.trace.add(this.host.id, `store ${operation} ${short(key)}: inject ${kind}${late}`);
  }
}

/** One store call: what it is, its key (as written and as read), and the lease token it carries. */
interface Call {
  readonly operation: Operation;
  readonly key: string;
  readonly token: string | undefined;
  readonly info: KeyInfo;
  readonly advance: Advance | undefined;
  /** When the caller made it (its time limit runs from there, a pause included). */
  readonly madeAt: number;
  /** Whether a fault was injected into it. */
  faulted: boolean;
}

/** A version advance: the version, and the lock its process held when it sent the call. */
interface Advance {
  readonly version: number;
  readonly lock: Tenure | undefined;
}

/** What a key is, as the defence counters name it. */
function kindOf(info: KeyInfo): string {
  return info.kind === 'handler' ? 'record' : info.kind === 'other' ? 'delivery' : info.kind;
}

function short(key: string): string {
  return key.startsWith(NAMESPACE) ? key.slice(NAMESPACE.length) : key;
}

function describe(value: unknown): string {
  if (typeof value === 'object' && value !== null && 'state' in value) {
    const claim = value as ClaimResult;
    return claim.state === 'acquired' ? `acquired (claim ${claim.attempt})` : claim.state;
  }
  return String(value);
}
