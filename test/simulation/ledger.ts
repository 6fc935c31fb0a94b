/**
 * The world's record of what really happened, kept apart from the store and the receivers so that the
 * invariants judge the receivers against it: which handler runs started and ended where, what each
 * wrote, which store calls landed, which faults were injected into which receiver, and what the
 * service was answered.
 */
import type { KeyInfo } from './keys';
import { LeaseBook } from './leases';
import type { HandlerSpec } from './modes';
import type { PlannedDelivery } from './scenario';

export type StoreFaultKind = 'fail' | 'lost' | 'slow' | 'hang' | 'crash' | 'paused';

/**
 * A store call of one receiver that the simulation made fail, time out, hang, or crash its caller; or
 * (`paused`) one whose answer reached its caller after storeTimeoutMs because its process was paused.
 */
export interface FaultRecord {
  readonly at: number;
  readonly op: string;
  readonly key: KeyInfo;
  /** The key as the receiver wrote it, and the lease token the call carried (none for the version calls). */
  readonly rawKey: string;
  readonly token: string | undefined;
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
  /** The delivery's key, and the attempt's lease token (every lease it takes carries it). */
  readonly key: string;
  readonly token: string;
  /** When the claim landed in the store (its lease starts there). */
  readonly claimedAt: number;
  /** The store's count of claims of the delivery, this one included: what the handlers' `context.attempt` says. */
  readonly claim: number;
  readonly runs: Run[];
  /** Guarded handlers this attempt skipped as stale (the `stale` hook). */
  readonly staleSkips: Set<string>;
}

/** `fenced`: the handler stopped before its write, at its signal's LeaseLostError or its resource's refusal of its fencing token. */
export type RunResult = 'ok' | 'error' | 'permanent' | 'crashed' | 'fenced';

/** One call of one handler for one delivery. */
export interface Run {
  readonly id: number;
  readonly host: Host;
  readonly attempt: AttemptRecord | undefined;
  readonly delivery: PlannedDelivery;
  readonly handler: HandlerSpec;
  /** The claim count the handler's `context.attempt` carried. */
  readonly claim: number | undefined;
  readonly start: number;
  end: number | undefined;
  result: RunResult | undefined;
  wrote: boolean;
  /**
   * Why its write came late, when it did: the lock it ran under had lapsed (for this cause) and been
   * taken over before it wrote, so a newer state may have been written meanwhile. Set by the invariants.
   */
  lateWrite: string | undefined;
}

/** Why a version is not owed to the final state: the exemption (its kind and cause, as counted) and the story. */
export interface NotOwed {
  readonly kind: 'completed-after-lapse' | 'skipped-over-late-advance';
  readonly cause: string;
  readonly why: string;
}

/** A request of the service that reached a receiver: when, and what it was (`attempt 2 of wdl_…`). */
export interface OpenRequest {
  readonly host: Host;
  readonly arrivedAt: number;
  readonly label: string;
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
  /** Every lease as the store held it. */
  readonly leases: LeaseBook;
  readonly active = new Set<Run>();
  readonly runsByDelivery = new Map<string, Run[]>();
  /** The attempt a receiver runs a delivery's handlers under: its latest acquired claim of the delivery. */
  readonly currentAttempt = new Map<string, AttemptRecord>();
  readonly attemptsByDelivery = new Map<string, AttemptRecord[]>();
  readonly attemptsByToken = new Map<string, AttemptRecord>();
  /** Handlers of deliveries that succeeded in some run, threw PermanentFailure in some run, or were skipped as stale. */
  readonly succeeded = new Set<string>();
  readonly permanent = new Set<string>();
  readonly staleSkipped = new Set<string>();
  /** Handlers of deliveries whose completion (the handler's record, or the delivery's) landed in the store, and when it first did. */
  readonly acknowledged = new Map<string, number>();
  /**
   * Handlers of deliveries whose version is not owed to the final state, and why: their completion came
   * after the lock they ran under lapsed and was taken over, or their guard skipped them as stale over a
   * version record that an advance set after its own lock lapsed and was taken over (a late advance).
   */
  readonly notOwed = new Map<string, NotOwed>();
  /** Per guarded handler and resource: the last version written, the highest written, the highest acknowledged. */
  readonly lastWritten = new Map<string, number>();
  readonly maxWritten = new Map<string, number>();
  readonly maxAcknowledged = new Map<string, number>();
  /** The run whose write is the highest acknowledged one, and the run that wrote last, per slot. */
  readonly acknowledgedRun = new Map<string, Run>();
  readonly lastWriter = new Map<string, Run>();
  /** Per version record (its key): whether the advance that set it last came late (its lock taken over), and by what. */
  readonly versionSetBy = new Map<string, { version: number; late: string | undefined }>();
  /** Deliveries the service got a 2xx for, and per delivery what each 2xx said (`handled`, `duplicate`, `failed`, `queued`). */
  readonly answered2xx = new Set<string>();
  readonly answers = new Map<string, Set<string>>();
  /** Per lease token: when its receiver was first told, by an extend that answered false in time, that a lease of the attempt is gone. */
  readonly leaseLossTold = new Map<string, number>();
  /** Requests a receiver got and has not answered yet. */
  readonly openRequests = new Set<OpenRequest>();
  private nextRunId = 1;

  constructor(leaseMs: number) {
    this.leases = new LeaseBook(leaseMs);
  }

  /**
   * The attempt of `host` a handler run belongs to: the one whose claim count the handler's context
   * carries (one process may hold two attempts of a delivery at once, when the first outlived its
   * lease), or else the latest.
   */
  attemptOf(host: Host, deliveryId: string, claim?: number | undefined): AttemptRecord | undefined {
    const attempts = this.attemptsByDelivery.get(deliveryId) ?? [];
    for (let i = attempts.length - 1; i >= 0; i--) {
      const attempt = attempts[i] as AttemptRecord;
      if (attempt.host === host && attempt.claim === claim) return attempt;
    }
    return this.currentAttempt.get(`${host.id} ${deliveryId}`);
  }

  claimAcquired(host: Host, deliveryId: string, key: string, token: string, at: number, claim: number): void {
    const attempt: AttemptRecord = { host, deliveryId, key, token, claimedAt: at, claim, runs: [], staleSkips: new Set() };
    this.currentAttempt.set(`${host.id} ${deliveryId}`, attempt);
    this.attemptsByToken.set(token, attempt);
    const list = this.attemptsByDelivery.get(deliveryId) ?? [];
    list.push(attempt);
    this.attemptsByDelivery.set(deliveryId, list);
  }

  startRun(host: Host, delivery: PlannedDelivery, handler: HandlerSpec, at: number, claim: number | undefined): Run {
    const attempt = this.attemptOf(host, delivery.id, claim);
    const run: Run = {
      id: this.nextRunId++,
      host,
      attempt,
      delivery,
      handler,
      claim,
      start: at,
      end: undefined,
      result: undefined,
      wrote: false,
      lateWrite: undefined,
    };
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
    this.lastWriter.set(slot, run);
    this.maxWritten.set(slot, Math.max(this.maxWritten.get(slot) ?? 0, version));
  }

  /**
   * A completion landed: the handler's record, or (`handler` undefined) the delivery's, which covers all
   * its handlers. Returns the runs whose writes it acknowledges (the last write of each handler).
   */
  recordCompletion(deliveryId: string, handler: string | undefined, handlers: readonly HandlerSpec[], at: number): Run[] {
    const acknowledged: Run[] = [];
    for (const spec of handlers) {
      if (handler !== undefined && spec.name !== handler) continue;
      const key = handlerOf(deliveryId, spec.name);
      if (!this.acknowledged.has(key)) this.acknowledged.set(key, at);
      const wrote = [...(this.runsByDelivery.get(deliveryId) ?? [])].reverse().find((run) => run.handler.name === spec.name && run.wrote);
      if (wrote !== undefined) acknowledged.push(wrote);
    }
    return acknowledged;
  }

  /** A write whose completion landed cleanly (its run held its lock throughout): no older version may overwrite it. */
  raiseAcknowledged(run: Run): void {
    const slot = slotOf(run.handler.name, run.delivery.resource);
    if ((this.maxAcknowledged.get(slot) ?? 0) >= run.delivery.version) return;
    this.maxAcknowledged.set(slot, run.delivery.version);
    this.acknowledgedRun.set(slot, run);
  }
}
