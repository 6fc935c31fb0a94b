/**
 * When a run that broke a guarantee is excused: only for a fault the simulation injected into that
 * run's own attempt, never because the store shows a lease lapsed (a lease that lapses without any
 * fault is exactly the defect the invariants are there to catch).
 *
 * - A lapse: the attempt's receiver was paused while the attempt held its leases, an extend (a
 *   heartbeat) of the attempt's keys failed, timed out or hung, or its handlers were still running at
 *   maxRunMs after the claim (the heartbeat stops there for good).
 * - For a handler run again after it succeeded, also: its receiver crashed after the run started, or a
 *   store call of the attempt on the delivery's keys (or the guard's) failed or timed out, so its
 *   completion may never have been recorded.
 *
 * In answer-fast mode the attempt is a worker's, and its keys are the `work:` ones. There, too: a try
 * the queue counted as failed is one in which something really failed (`tryFailure`).
 */
import type { Handover } from './job-ledger';
import { concerns } from './keys';
import type { AttemptRecord, Host, Ledger, Run } from './ledger';
import type { Scenario } from './scenario';

export type LapseCause = 'pause' | 'extend' | 'overrun';
export type RerunCause = 'crash' | 'lapse' | 'store';

/** What the excuses need of the scenario. */
type Limits = Pick<Scenario, 'maxRunMs' | 'handlersRunIn'>;

interface Window {
  readonly host: Host;
  readonly attempt: AttemptRecord | undefined;
  /** From the claim (or the run's start when no claim is known) to now. */
  readonly from: number;
  readonly deliveryId: string;
  readonly handler: string | undefined;
  readonly resource: string;
}

function windowOf(run: Run, handlerOnly: boolean): Window {
  return {
    host: run.host,
    attempt: run.attempt,
    from: run.attempt?.claimedAt ?? run.start,
    deliveryId: run.delivery.id,
    handler: handlerOnly ? run.handler.name : undefined,
    resource: run.delivery.resource,
  };
}

function pausedDuring(host: Host, from: number, to: number): boolean {
  return host.pauses.some((pause) => pause.from <= to && (pause.to ?? Number.POSITIVE_INFINITY) >= from);
}

function lapse(window: Window, now: number, limits: Limits): LapseCause | undefined {
  const { host, from } = window;
  if (pausedDuring(host, from, now)) return 'pause';
  // An extend whose answer alone was lost (or late) renewed the lease all the same: it excuses nothing.
  const work = limits.handlersRunIn === 'worker';
  const extendFailed = host.faults.some(
    (fault) =>
      fault.op === 'extend' &&
      !fault.landedInTime &&
      fault.at >= from &&
      fault.at <= now &&
      concerns(fault.key, window.deliveryId, window.handler, window.resource, work),
  );
  if (extendFailed) return 'extend';
  if (window.attempt !== undefined && lastActive(window.attempt, now) >= window.attempt.claimedAt + limits.maxRunMs) return 'overrun';
  return undefined;
}

/** The last moment the attempt's handlers were running (now, while one still runs). */
function lastActive(attempt: AttemptRecord, now: number): number {
  let last = Number.NEGATIVE_INFINITY;
  for (const run of attempt.runs) if (run.start <= now) last = Math.max(last, Math.min(run.end ?? now, now));
  return last;
}

/** Why `run`'s leases may have lapsed by `now` through an injected fault, or `undefined`. */
export function lapseOf(run: Run, now: number, limits: Limits): LapseCause | undefined {
  return lapse(windowOf(run, true), now, limits);
}

/**
 * Why a handler that succeeded in `earlier` (one of its runs, or in delivery mode any run of the
 * attempt) may be run again by `now`, or `undefined` when nothing excuses it.
 */
export function rerunCause(earlier: Run, now: number, limits: Limits): RerunCause | undefined {
  const window = windowOf(earlier, false);
  const { host, from } = window;
  if (host.crashedAt !== undefined && host.crashedAt >= earlier.start && host.crashedAt <= now) return 'crash';
  if (lapse(window, now, limits) !== undefined) return 'lapse';
  const work = limits.handlersRunIn === 'worker';
  const storeFault = host.faults.some(
    (fault) => fault.at >= from && fault.at <= now && concerns(fault.key, window.deliveryId, undefined, window.resource, work),
  );
  return storeFault ? 'store' : undefined;
}

/**
 * What really failed in a try the worker gave back as failed (its processor rejected), or undefined
 * when nothing did: a handler threw in it, a store call of its worker on the delivery's keys (or its
 * resource's guard's) was made to fail, its handlers ran to maxRunMs, or its worker was paused.
 * Waiting for a busy resource or for another attempt of the delivery is not a failure.
 */
export function tryFailure(handover: Handover, ledger: Ledger, scenario: Scenario, now: number): string | undefined {
  const { host, at, job } = handover;
  if (job.deliveryId === undefined) return undefined;
  const runs = (ledger.runsByDelivery.get(job.deliveryId) ?? []).filter((run) => run.host === host && run.start >= at && run.start <= now);
  const threw = runs.find((run) => run.result === 'error' || run.result === 'permanent');
  if (threw !== undefined) return `${threw.handler.name} threw`;
  if (now - at >= scenario.maxRunMs) return 'past maxRunMs';
  if (pausedDuring(host, at, now)) return 'its worker was paused';
  const resource = scenario.deliveries.find((delivery) => delivery.id === job.deliveryId)?.resource ?? '';
  const fault = host.faults.find(
    (candidate) =>
      candidate.at >= at && candidate.at <= now && concerns(candidate.key, job.deliveryId as string, undefined, resource, true),
  );
  return fault === undefined ? undefined : `a store ${fault.op} was made to ${fault.kind}`;
}
