/**
 * When a broken guarantee is excused: exactly where the protocol is exempt, and never otherwise. Leases
 * without fencing tokens cannot keep a process that stopped for longer than its lease from coming back
 * to find its work taken over, and its late calls land anyway. So:
 *
 * - **A lapse** excuses only a lease that really lapsed and was taken over: the lease book
 *   (leases.ts) shows no renewal landing for `leaseMs` before another claim took the key, and the
 *   simulation injected what kept the holder from renewing it for that whole stretch (explainLapse):
 *   its process was paused or had crashed, its handlers ran past `maxRunMs`, a store call of the
 *   holder left the key to lapse by design (a complete or release that failed, both tries of a
 *   version advance failed), or every heartbeat of the key in an otherwise open stretch failed. A lease
 *   that lapsed for any other reason is what the invariants are there to catch (a heartbeat that does
 *   not renew a lock, a store that drops a renewal).
 * - **A handler run again** after it succeeded is excused only while its completion had not landed
 *   when the new attempt claimed it, and only by what happened to the earlier attempt before it gave
 *   the record up: a crash of its process, a pause of it (its store calls time out meanwhile, and it
 *   fails), a lapse of its lease on the record (as above), or a store fault on the delivery's keys or
 *   its guard's (the completion, or the version advance before it, never landed).
 * - **An older version over a newer one** is excused only by the lapse of the run that writes it: the
 *   lock it ran under was taken over after a lapse before it wrote (`lateWrite`). A version whose own
 *   run's lock was taken over before its completion landed, or that its guard skipped as stale over a
 *   late version advance (one that landed after its lock lapsed and was taken over), is not owed to the
 *   final state: the model makes the same exemption. Each is counted, with its cause, in the summary.
 *
 * In answer-fast mode the attempt is a worker's, and its keys are the `work:` ones. There, too: a try
 * the queue counted as failed is one in which something really failed (`tryFailure`).
 */
import { NAMESPACE } from './context';
import type { Handover } from './job-ledger';
import { concerns, deliveryKey, lockKey, recordKey, versionKey } from './keys';
import type { Gap, Tenure } from './leases';
import type { AttemptRecord, FaultRecord, Host, Ledger, Run } from './ledger';
import type { Scenario } from './scenario';

export type LapseCause = 'pause' | 'crash' | 'overrun' | 'store' | 'extend';
export type RerunCause = 'crash' | 'pause' | 'lapse' | 'store';

/** What the excuses need of the scenario. */
type Limits = Pick<Scenario, 'leaseMs' | 'maxRunMs' | 'storeTimeoutMs' | 'handlersRunIn' | 'completion' | 'handlers'>;

/**
 * How much longer than one heartbeat period a stretch may go without a renewal landing before only a
 * fault explains it: a renewal is sent every `leaseMs / 3` and lands within tens of milliseconds.
 */
export const RENEWAL_SLACK_MS = 1_000;

/** The receiver's heartbeat period (receiver-state.ts): a third of the lease. */
export function heartbeatMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 3));
}
/** Store calls a guarded handler's attempt may still make after its handler ended (advance twice, complete, release). */
const CALLS_AFTER_HANDLER = 4;

interface Stop {
  readonly from: number;
  readonly to: number;
  readonly cause: Exclude<LapseCause, 'extend'>;
}

/**
 * Why nothing renewed `tenure`'s lease during `gap`, or undefined when nothing the simulation injected
 * explains it. Its holder could not renew while its process was paused or after it crashed, after its
 * handlers ran past maxRunMs, or after a store call gave the key up by design; what is left of the gap,
 * in stretches longer than a heartbeat period, must each hold a heartbeat of this key that was made to fail.
 */
export function explainLapse(tenure: Tenure, gap: Gap, ledger: Ledger, limits: Limits): LapseCause | undefined {
  const stops = stopsOf(tenure, ledger, limits).filter((stop) => stop.from < gap.at && stop.to > gap.from);
  const open = uncovered(gap, stops);
  const long = open.filter((stretch) => stretch.to - stretch.from >= heartbeatMs(limits.leaseMs) + RENEWAL_SLACK_MS);
  const failedBeat = (stretch: { from: number; to: number }) =>
    tenure.host.faults.some(
      (fault) =>
        fault.op === 'extend' &&
        !fault.landedInTime &&
        fault.token === tenure.token &&
        fault.rawKey === tenure.key &&
        fault.at >= stretch.from - RENEWAL_SLACK_MS &&
        fault.at <= stretch.to,
    );
  if (!long.every(failedBeat)) return undefined;
  if (long.length > 0) return 'extend';
  // The stop that covers most of the gap names it.
  let best: Stop | undefined;
  let bestCover = -1;
  for (const stop of stops) {
    const cover = Math.min(stop.to, gap.at) - Math.max(stop.from, gap.from);
    if (cover > bestCover) [best, bestCover] = [stop, cover];
  }
  return best?.cause ?? 'extend';
}

/** When the holder of `tenure` could not renew it, and why. */
function stopsOf(tenure: Tenure, ledger: Ledger, limits: Limits): Stop[] {
  const { host } = tenure;
  const stops: Stop[] = host.pauses.map((pause) => ({ from: pause.from, to: pause.to ?? Number.POSITIVE_INFINITY, cause: 'pause' }));
  if (host.crashedAt !== undefined) stops.push({ from: host.crashedAt, to: Number.POSITIVE_INFINITY, cause: 'crash' });
  const attempt = ledger.attemptsByToken.get(tenure.token);
  const overrunAt = attempt === undefined ? undefined : overrunOf(attempt, limits);
  if (overrunAt !== undefined) stops.push({ from: overrunAt, to: Number.POSITIVE_INFINITY, cause: 'overrun' });
  for (const fault of host.faults) if (givesUp(fault, tenure)) stops.push({ from: fault.at, to: Number.POSITIVE_INFINITY, cause: 'store' });
  return stops;
}

/** When the attempt's heartbeat stopped at maxRunMs (its handlers, or the calls after them, still going), if it did. */
function overrunOf(attempt: AttemptRecord, limits: Limits): number | undefined {
  if (attempt.runs.length === 0) return undefined;
  const stopAt = attempt.claimedAt + limits.maxRunMs;
  let activeUntil = Number.NEGATIVE_INFINITY;
  for (const run of attempt.runs)
    activeUntil = Math.max(activeUntil, (run.end ?? Number.POSITIVE_INFINITY) + CALLS_AFTER_HANDLER * limits.storeTimeoutMs);
  return activeUntil >= stopAt ? stopAt : undefined;
}

/**
 * A call whose caller saw it fail, after which the holder leaves the key to lapse: its complete or
 * release, a claim it took for a failure although it landed (the holder never knew it held the key),
 * or (for a lock) a version advance (after two failed tries the lock is left to lapse).
 */
function givesUp(fault: FaultRecord, tenure: Tenure): boolean {
  if (fault.op === 'claim' && fault.token === tenure.token && fault.rawKey === tenure.key) return fault.kind !== 'fail';
  // Whether the call landed or not, its caller saw it fail (a lost answer, a late one) and acts on that.
  if (fault.at < tenure.from) return false;
  if ((fault.op === 'complete' || fault.op === 'release') && fault.token === tenure.token) return fault.rawKey === tenure.key;
  return fault.op === 'advanceVersion' && tenure.info.kind === 'lock' && fault.rawKey === tenure.key.replace(':lock:', ':version:');
}

function uncovered(gap: Gap, stops: readonly Stop[]): { from: number; to: number }[] {
  const sorted = [...stops].sort((a, b) => a.from - b.from);
  const open: { from: number; to: number }[] = [];
  let at = gap.from;
  for (const stop of sorted) {
    if (stop.from > at) open.push({ from: at, to: Math.min(stop.from, gap.at) });
    at = Math.max(at, stop.to);
    if (at >= gap.at) break;
  }
  if (at < gap.at) open.push({ from: at, to: gap.at });
  return open.filter((stretch) => stretch.to > stretch.from);
}

/** Why `tenure` was taken over by `by`: an explained lapse, or undefined (it was not, or nothing explains it). */
export function takenOverAfterLapse(tenure: Tenure | undefined, by: number, ledger: Ledger, limits: Limits): LapseCause | undefined {
  if (tenure === undefined || tenure.end === undefined || tenure.end > by) return undefined;
  const gap = ledger.leases.lapseBeforeTakeover(tenure);
  return gap === undefined ? undefined : explainLapse(tenure, gap, ledger, limits);
}

function work(limits: Limits): boolean {
  return limits.handlersRunIn === 'worker';
}

/** The lock a guarded run held while it ran (its attempt's tenure of the resource's lock). */
export function lockTenureOf(run: Run, ledger: Ledger, limits: Limits): Tenure | undefined {
  if (run.attempt === undefined) return undefined;
  const key = lockKey(NAMESPACE, run.handler.name, run.delivery.resource, work(limits));
  return ledger.leases.held(key, run.attempt.token, run.start);
}

/**
 * Why two runs that overlap may: the lease that should have kept them apart (the delivery's, or the
 * resource's lock) was taken over from one of them after an explained lapse.
 */
export function overlapCause(
  run: Run,
  other: Run,
  sameDelivery: boolean,
  now: number,
  ledger: Ledger,
  limits: Limits,
): LapseCause | undefined {
  for (const one of [other, run]) {
    if (one.attempt === undefined) continue;
    const key = sameDelivery
      ? deliveryKey(NAMESPACE, one.delivery.id, work(limits))
      : lockKey(NAMESPACE, one.handler.name, one.delivery.resource, work(limits));
    const cause = takenOverAfterLapse(ledger.leases.held(key, one.attempt.token, one.start), now, ledger, limits);
    if (cause !== undefined) return cause;
  }
  return undefined;
}

/**
 * Why a handler that succeeded in `earlier` (one of its runs, or in delivery mode the last run of an
 * attempt whose handlers all succeeded) runs again in `rerun`, or undefined when nothing excuses it.
 */
export function rerunCause(earlier: Run, rerun: Run, ledger: Ledger, limits: Limits): RerunCause | undefined {
  const before = earlier.attempt;
  const after = rerun.attempt;
  if (before === undefined || after === undefined) return undefined;
  const { id: deliveryId, resource } = earlier.delivery;
  const handler = limits.completion === 'handler' ? earlier.handler.name : undefined;
  const completionKey = handler === undefined ? before.key : recordKey(NAMESPACE, deliveryId, handler, work(limits));
  // When the new attempt took the key: its record's claim, or the delivery's.
  const claimedAt = ledger.leases.held(completionKey, after.token, rerun.start)?.from ?? after.claimedAt;
  const acknowledged = ledger.acknowledged.get(`${deliveryId}#${earlier.handler.name}`);
  if (acknowledged !== undefined && acknowledged <= claimedAt) return undefined;
  // Until the earlier attempt gave the record up (released it, or lost it to the new claim).
  const given = ledger.leases.held(completionKey, before.token, earlier.start)?.end;
  const until = Math.min(claimedAt, given ?? claimedAt);
  const { host } = before;
  if (host.crashedAt !== undefined && host.crashedAt >= earlier.start && host.crashedAt <= until) return 'crash';
  if (pausedDuring(host, earlier.start, until)) return 'pause';
  for (const key of new Set([completionKey, before.key])) {
    if (takenOverAfterLapse(ledger.leases.held(key, before.token, earlier.start), claimedAt, ledger, limits) !== undefined) return 'lapse';
  }
  // The version calls carry no token: those of the delivery's guarded handlers, by the earlier attempt's process.
  const versionKeys = new Set(
    limits.handlers.filter((spec) => spec.guarded).map((spec) => versionKey(NAMESPACE, spec.name, resource, work(limits))),
  );
  const fault = host.faults.find(
    (candidate) =>
      candidate.at >= before.claimedAt &&
      candidate.at <= until &&
      (candidate.token === before.token || versionKeys.has(candidate.rawKey)) &&
      concerns(candidate.key, deliveryId, undefined, resource, work(limits)),
  );
  return fault === undefined ? undefined : 'store';
}

/** Why a guarded run's write came late: the lock it ran under was taken over after an explained lapse before it wrote. */
export function lateWriteCause(run: Run, now: number, ledger: Ledger, limits: Limits): LapseCause | undefined {
  return takenOverAfterLapse(lockTenureOf(run, ledger, limits), now, ledger, limits);
}

/**
 * Whether a delivery answered 2xx may have lost its completion, and why: a complete of its record was
 * made to fail (it never landed, or landed too late), or an attempt's lease on it was taken over after
 * an explained lapse (its complete then answers false). Undefined when nothing excuses a lost one.
 */
export function lostCompletionCause(deliveryId: string, hosts: Iterable<Host>, ledger: Ledger, limits: Limits): string | undefined {
  const key = deliveryKey(NAMESPACE, deliveryId, work(limits));
  for (const host of hosts) {
    const fault = host.faults.find((candidate) => candidate.op === 'complete' && candidate.rawKey === key && !candidate.landedInTime);
    if (fault !== undefined) return `its complete was made to ${fault.kind}`;
  }
  for (const tenure of ledger.leases.of(key)) {
    const cause = takenOverAfterLapse(tenure, Number.POSITIVE_INFINITY, ledger, limits);
    if (cause !== undefined) return `the lease of ${tenure.host.id} lapsed (${cause}) and was taken over`;
  }
  return undefined;
}

function pausedDuring(host: Host, from: number, to: number): boolean {
  return host.pauses.some((pause) => pause.from <= to && (pause.to ?? Number.POSITIVE_INFINITY) >= from);
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
  const threw = runs.find((run) => run.result === 'error' || run.result === 'permanent' || run.result === 'fenced');
  if (threw !== undefined) return `${threw.handler.name} ${threw.result === 'fenced' ? 'stopped at its fence' : 'threw'}`;
  if (now - at >= scenario.maxRunMs) return 'past maxRunMs';
  if (pausedDuring(host, at, now)) return 'its worker was paused';
  const resource = scenario.deliveries.find((delivery) => delivery.id === job.deliveryId)?.resource ?? '';
  const fault = host.faults.find(
    (candidate) =>
      candidate.at >= at && candidate.at <= now && concerns(candidate.key, job.deliveryId as string, undefined, resource, true),
  );
  if (fault === undefined) return undefined;
  return fault.kind === 'paused'
    ? `a store ${fault.op} timed out while its worker was paused`
    : `a store ${fault.op} was made to ${fault.kind}`;
}
