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
 */
import { concerns } from './keys';
import type { AttemptRecord, Host, Run } from './ledger';

export type LapseCause = 'pause' | 'extend' | 'overrun';
export type RerunCause = 'crash' | 'lapse' | 'store';

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

function lapse(window: Window, now: number, maxRunMs: number): LapseCause | undefined {
  const { host, from } = window;
  if (host.pauses.some((pause) => pause.from <= now && (pause.to ?? Number.POSITIVE_INFINITY) >= from)) return 'pause';
  // An extend whose answer alone was lost (or late) renewed the lease all the same: it excuses nothing.
  const extendFailed = host.faults.some(
    (fault) =>
      fault.op === 'extend' &&
      !fault.landedInTime &&
      fault.at >= from &&
      fault.at <= now &&
      concerns(fault.key, window.deliveryId, window.handler, window.resource),
  );
  if (extendFailed) return 'extend';
  if (window.attempt !== undefined && lastActive(window.attempt, now) >= window.attempt.claimedAt + maxRunMs) return 'overrun';
  return undefined;
}

/** The last moment the attempt's handlers were running (now, while one still runs). */
function lastActive(attempt: AttemptRecord, now: number): number {
  let last = Number.NEGATIVE_INFINITY;
  for (const run of attempt.runs) if (run.start <= now) last = Math.max(last, Math.min(run.end ?? now, now));
  return last;
}

/** Why `run`'s leases may have lapsed by `now` through an injected fault, or `undefined`. */
export function lapseOf(run: Run, now: number, maxRunMs: number): LapseCause | undefined {
  return lapse(windowOf(run, true), now, maxRunMs);
}

/**
 * Why a handler that succeeded in `earlier` (one of its runs, or in delivery mode any run of the
 * attempt) may be run again by `now`, or `undefined` when nothing excuses it.
 */
export function rerunCause(earlier: Run, now: number, maxRunMs: number): RerunCause | undefined {
  const window = windowOf(earlier, false);
  const { host, from } = window;
  if (host.crashedAt !== undefined && host.crashedAt >= earlier.start && host.crashedAt <= now) return 'crash';
  if (lapse(window, now, maxRunMs) !== undefined) return 'lapse';
  const storeFault = host.faults.some(
    (fault) => fault.at >= from && fault.at <= now && concerns(fault.key, window.deliveryId, undefined, window.resource),
  );
  return storeFault ? 'store' : undefined;
}
