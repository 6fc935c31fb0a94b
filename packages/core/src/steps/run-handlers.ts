/**
 * Step 3, run the handlers: one after another, with the lease renewed by heartbeats while they run,
 * the deadline after which the receiver answers 503 while they go on (receive mode only: a worker has
 * no one waiting), and the maximum run time after which the lease is no longer renewed.
 */
import type { Attempt } from '../attempt';
import { type Awaitable, isPromiseLike } from '../awaitable';
import { DeliveryContext, timeoutError } from '../context';
import { runInOrder } from '../dispatch';
import { DEADLINE, type HandlerOutcome, OVERRUN, watchHandlers } from '../in-flight';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import { callStore } from '../store-call';
import { runGuarded } from './run-guarded';

export type RunResult = HandlerOutcome | typeof DEADLINE | typeof OVERRUN;

export function runHandlers(state: ReceiverState, attempt: Attempt): Awaitable<RunResult> {
  const context = new DeliveryContext(attempt.headers, attempt.receivedAt, attempt.claims, attempt.secretIndex);
  attempt.context = context;
  // Read only by the `handled` hook: no clock read per delivery when nobody listens.
  if (hasListeners(state, 'handled')) attempt.startedAt = Date.now();
  const scope = attempt.trace?.runInScope;
  const { handlers, guarded } = attempt.matched;
  let running: Promise<void> | undefined;
  try {
    if (guarded !== undefined)
      running = scope === undefined ? runGuarded(state, attempt, context) : scope(() => runGuarded(state, attempt, context));
    else if (scope === undefined) running = runInOrder(handlers, attempt.delivery, context);
    else running = scope(() => runInOrder(handlers, attempt.delivery, context));
  } catch (error) {
    return { error: error ?? new Error('a handler threw no reason') };
  }
  if (running === undefined) return undefined;

  const { first, settled } = watchHandlers(running, {
    deadlineMs: attempt.mode === 'receive' ? state.config.deadlineMs : Number.POSITIVE_INFINITY,
    heartbeatMs: state.heartbeatMs,
    heartbeat: () => renewLeases(state, attempt),
    maxRunMs: state.config.maxRunMs,
    overrun: () => reportOverrun(state, attempt),
    // A worker has no one waiting for an answer, but its queue job must end (retried, then
    // dead-lettered) and free its slot even if the handler never does.
    endAtOverrun: attempt.mode === 'work',
  });
  attempt.settled = settled;
  return first;
}

function leaseLost(state: ReceiverState, attempt: Attempt, key: string, owned: boolean): void {
  if (owned) return;
  const what = key === attempt.key ? attempt.delivery.deliveryId : key;
  reportError(state, new Error(`hookline: lost the lease on ${what} while its handlers ran`), {
    phase: 'store',
    delivery: attempt.delivery,
  });
}

/**
 * One heartbeat: every lease the attempt holds, the delivery's own and those its guards took
 * (per-handler records, ordering locks), is extended with the attempt's token, so none of them lapses
 * while a handler still runs.
 */
function renewLeases(state: ReceiverState, attempt: Attempt): void {
  renewLease(state, attempt, attempt.key);
  const held = attempt.heldLeases;
  if (held === undefined) return;
  // A copy: a guard may give a lease up (and the list change) while an extend is in flight.
  for (const key of held.slice()) renewLease(state, attempt, key);
}

function renewLease(state: ReceiverState, attempt: Attempt, key: string): void {
  const { store, leaseMs, storeTimeoutMs } = state.config;
  const report = (error: unknown) => reportError(state, error, { phase: 'store', delivery: attempt.delivery });
  try {
    const owned = callStore(attempt, 'extend', storeTimeoutMs, () => store.extend(key, attempt.token, leaseMs));
    if (isPromiseLike(owned)) owned.then((value) => leaseLost(state, attempt, key, value), report);
    else leaseLost(state, attempt, key, owned);
  } catch (error) {
    report(error);
  }
}

/** The handlers passed maxRunMs: every lease is left to lapse, so the next attempt may run the delivery. */
function reportOverrun(state: ReceiverState, attempt: Attempt): void {
  const error = new Error(
    `hookline: the handlers of ${attempt.delivery.deliveryId} ran past maxRunMs (${state.config.maxRunMs} ms); its lease is no longer renewed, so the next attempt may run it again`,
  );
  // A handler that listens to its signal stops here rather than run on beside the next attempt.
  attempt.context?.abort(timeoutError(error.message));
  reportError(state, error, { phase: 'handler', delivery: attempt.delivery });
  if (hasListeners(state, 'failed') && attempt.context !== undefined) {
    emit(state, 'failed', { delivery: attempt.delivery, context: attempt.context, error, permanent: false });
  }
}

export { DEADLINE, OVERRUN };
