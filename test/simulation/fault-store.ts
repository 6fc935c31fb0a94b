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
import type { StoreFaultKind } from './ledger';
import { overTheNetwork } from './network';
import { countFault } from './stats';
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
    return this.call('claim', key, () => this.shared.claim(key, token, leaseMs));
  }
  complete(key: string, token: string, retentionMs: number) {
    return this.call('complete', key, () => this.shared.complete(key, token, retentionMs));
  }
  release(key: string, token: string) {
    return this.call('release', key, () => this.shared.release(key, token));
  }
  extend(key: string, token: string, leaseMs: number) {
    return this.call('extend', key, () => this.shared.extend(key, token, leaseMs));
  }
  readVersion(key: string) {
    return this.call('readVersion', key, () => this.shared.readVersion(key));
  }
  advanceVersion(key: string, version: number, retentionMs: number) {
    return this.call('advanceVersion', key, () => this.shared.advanceVersion(key, version, retentionMs));
  }

  private call<T>(operation: Operation, key: string, perform: () => T): T | Promise<T> {
    const { host } = this;
    if (host.crashed) return never();
    if (host.paused) {
      // A paused process sends nothing: the call goes out when it resumes.
      return new Promise<T>((resolve, reject) =>
        host.gate(() => new Promise<T>((sent) => sent(this.call(operation, key, perform))).then(resolve, reject)),
      );
    }
    const { random, scenario } = this.context;
    const info = parseKey(key, NAMESPACE);
    const crashAfter = this.context.mayCrashNow(scenario.rates.crashAfterStoreCall);
    if (random.chance(scenario.rates.syncStore)) {
      if (random.chance(scenario.rates.storeFault)) {
        this.fault(operation, key, info, 'fail', false);
        throw new Error(`simulated store failure (${operation})`);
      }
      const value = this.land(operation, key, info, perform);
      if (crashAfter) {
        this.fault(operation, key, info, 'crash', true);
        this.context.crash(host, `right after its ${operation} of ${short(key)} landed`);
        return never();
      }
      return value;
    }
    return overTheNetwork(this.context, host, {
      land: () => this.land(operation, key, info, perform),
      fault: (kind, landedInTime) => this.fault(operation, key, info, kind, landedInTime),
      crashAfter,
      server: 'store',
      operation,
      what: `${operation} of ${short(key)}`,
    });
  }

  /** Performs the call on the shared store and tells the ledger what landed. */
  private land<T>(operation: Operation, key: string, info: KeyInfo, perform: () => T): T {
    const value = perform();
    const { ledger, scenario, trace } = this.context;
    trace.add(this.host.id, `store ${operation} ${short(key)} → ${describe(value)}`);
    if ((info.kind === 'delivery' || info.kind === 'handler') && info.work !== (scenario.handlersRunIn === 'worker')) return value;
    if (operation === 'claim' && info.kind === 'delivery' && (value as ClaimResult).state === 'acquired') {
      ledger.claimAcquired(this.host, info.deliveryId, Date.now(), (value as ClaimResult & { state: 'acquired' }).attempt);
    }
    if (operation === 'complete' && value === true && (info.kind === 'delivery' || info.kind === 'handler')) {
      const handler = info.kind === 'handler' ? info.handler : undefined;
      ledger.recordCompletion(info.deliveryId, handler, scenario.handlers);
    }
    return value;
  }

  private fault(operation: Operation, key: string, info: KeyInfo, kind: StoreFaultKind, landedInTime: boolean): void {
    this.host.faults.push({ at: Date.now(), op: operation, key: info, kind, landedInTime });
    countFault(this.context.stats, kind === 'crash' ? 'crash-after-store-call' : `store-${kind}`);
    this.context.trace.add(this.host.id, `store ${operation} ${short(key)}: inject ${kind}`);
  }
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
