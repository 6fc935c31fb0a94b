/**
 * The world's record of what really happened, kept apart from the store and the receivers so that the
 * invariants judge the receivers against it: which handler runs started and ended where, what each
 * wrote, which store calls landed, which faults were injected into which receiver, and what the
 * service was answered.
 */
import type { KeyInfo } from './keys';
import type { HandlerSpec } from './modes';
import type { PlannedDelivery } from './scenario';

export type StoreFaultKind = 'fail' | 'lost' | 'slow' | 'hang' | 'crash';

/** A store call of one receiver that the simulation made fail, time out, hang, or crash its caller. */
export interface FaultRecord {
  readonly at: number;
  readonly op: string;
  readonly key: KeyInfo;
  readonly kind: StoreFaultKind;
  /** Whether the call landed in the store in time all the same (a lost answer, a slow answer to a call that landed early). */
  readonly landedInTime: boolean;
}

/** One receiver process (an incarnation: a restart is a new one), as the ledger sees it. */
export interface Host {
  readonly id: string;
  crashedAt: number | undefined;
  readonly pauses: { from: number; to: number | undefined }[];
  readonly faults: FaultRecord[];
}

/** One claim of a delivery's record that a receiver acquired: the attempt its handler runs belong to. */
export interface AttemptRecord {
  readonly host: Host;
  readonly deliveryId: string;
  /** When the claim landed in the store (its lease starts there). */
  readonly claimedAt: number;
  /** The store's count of claims of the delivery, this one included: what the handlers' `context.attempt` says. */
  readonly claim: number;
  readonly runs: Run[];
  /** Guarded handlers this attempt skipped as stale (the `stale` hook). */
  readonly staleSkips: Set<string>;
}

export type RunResult = 'ok' | 'error' | 'permanent' | 'crashed';

/** One call of one handler for one delivery. */
export interface Run {
  readonly id: number;
  readonly host: Host;
  readonly attempt: AttemptRecord | undefined;
  readonly delivery: PlannedDelivery;
  readonly handler: HandlerSpec;
  readonly start: number;
  end: number | undefined;
  result: RunResult | undefined;
  wrote: boolean;
}

/** `delivery#handler`, as the sets below key a handler of a delivery. */
export function handlerOf(deliveryId: string, handler: string): string {
  return `${deliveryId}#${handler}`;
}

/** `handler|resource`: one guarded handler's state of one resource. */
export function slotOf(handler: string, resource: string): string {
  return `${handler}|${resource}`;
}

export class Ledger {
  readonly active = new Set<Run>();
  readonly runsByDelivery = new Map<string, Run[]>();
  /** The attempt a receiver runs a delivery's handlers under: its latest acquired claim of the delivery. */
  readonly currentAttempt = new Map<string, AttemptRecord>();
  readonly attemptsByDelivery = new Map<string, AttemptRecord[]>();
  /** Handlers of deliveries that succeeded in some run, threw PermanentFailure in some run, or were skipped as stale. */
  readonly succeeded = new Set<string>();
  readonly permanent = new Set<string>();
  readonly staleSkipped = new Set<string>();
  /** Handlers of deliveries whose completion (the handler's record, or the delivery's) landed in the store. */
  readonly acknowledged = new Set<string>();
  /** Per guarded handler and resource: the last version written, the highest written, the highest acknowledged. */
  readonly lastWritten = new Map<string, number>();
  readonly maxWritten = new Map<string, number>();
  readonly maxAcknowledged = new Map<string, number>();
  /** The run whose write is the highest acknowledged one, per slot. */
  readonly acknowledgedRun = new Map<string, Run>();
  /** Handler and resource slots whose state an excused run (its lease lapsed) may have left behind. */
  readonly tainted = new Set<string>();
  /** Deliveries the service got a 2xx for. */
  readonly answered2xx = new Set<string>();
  private nextRunId = 1;

  /**
   * The attempt of `host` a handler run belongs to: the one whose claim count the handler's context
   * carries (one process may hold two attempts of a delivery at once, when the first outlived its
   * lease), or else the latest.
   */
  attemptOf(host: Host, deliveryId: string, claim?: number): AttemptRecord | undefined {
    const attempts = this.attemptsByDelivery.get(deliveryId) ?? [];
    for (let i = attempts.length - 1; i >= 0; i--) {
      const attempt = attempts[i] as AttemptRecord;
      if (attempt.host === host && attempt.claim === claim) return attempt;
    }
    return this.currentAttempt.get(`${host.id} ${deliveryId}`);
  }

  claimAcquired(host: Host, deliveryId: string, at: number, claim: number): void {
    const attempt: AttemptRecord = { host, deliveryId, claimedAt: at, claim, runs: [], staleSkips: new Set() };
    this.currentAttempt.set(`${host.id} ${deliveryId}`, attempt);
    const list = this.attemptsByDelivery.get(deliveryId) ?? [];
    list.push(attempt);
    this.attemptsByDelivery.set(deliveryId, list);
  }

  startRun(host: Host, delivery: PlannedDelivery, handler: HandlerSpec, at: number, claim: number): Run {
    const attempt = this.attemptOf(host, delivery.id, claim);
    const run: Run = { id: this.nextRunId++, host, attempt, delivery, handler, start: at, end: undefined, result: undefined, wrote: false };
    attempt?.runs.push(run);
    const list = this.runsByDelivery.get(delivery.id) ?? [];
    list.push(run);
    this.runsByDelivery.set(delivery.id, list);
    this.active.add(run);
    return run;
  }

  endRun(run: Run, result: RunResult, at: number): void {
    run.end = at;
    run.result = result;
    this.active.delete(run);
    const key = handlerOf(run.delivery.id, run.handler.name);
    if (result === 'ok') this.succeeded.add(key);
    if (result === 'permanent') this.permanent.add(key);
  }

  /** The guarded handler wrote `state[resource] = version`. */
  recordWrite(run: Run): void {
    run.wrote = true;
    const slot = slotOf(run.handler.name, run.delivery.resource);
    const { version } = run.delivery;
    this.lastWritten.set(slot, version);
    this.maxWritten.set(slot, Math.max(this.maxWritten.get(slot) ?? 0, version));
    if (this.acknowledged.has(handlerOf(run.delivery.id, run.handler.name))) this.raiseAcknowledged(slot, run);
  }

  /** A completion landed: the handler's record, or (`handler` undefined) the delivery's, which covers all its handlers. */
  recordCompletion(deliveryId: string, handler: string | undefined, handlers: readonly HandlerSpec[]): void {
    for (const spec of handlers) {
      if (handler !== undefined && spec.name !== handler) continue;
      this.acknowledged.add(handlerOf(deliveryId, spec.name));
      const wrote = [...(this.runsByDelivery.get(deliveryId) ?? [])].reverse().find((run) => run.handler.name === spec.name && run.wrote);
      if (wrote !== undefined) this.raiseAcknowledged(slotOf(spec.name, wrote.delivery.resource), wrote);
    }
  }

  private raiseAcknowledged(slot: string, run: Run): void {
    if ((this.maxAcknowledged.get(slot) ?? 0) >= run.delivery.version) return;
    this.maxAcknowledged.set(slot, run.delivery.version);
    this.acknowledgedRun.set(slot, run);
  }
}
