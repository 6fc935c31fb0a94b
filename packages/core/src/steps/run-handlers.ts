/**
 * Step 4a, run the handlers: one after another, with the leases renewed by one heartbeat while they
 * run, the deadline after which the receiver answers 503 while they go on (receive mode only: a worker
 * has no one waiting), and the maximum run time after which the leases are no longer renewed (and a
 * worker's job fails). Once they ended, settle (step 5) records their outcome; past the deadline (or
 * `maxRunMs`) this step ends the attempt, and settle runs when they end, after the answer.
 */
import type { Attempt } from '../attempt';
import * as answers from '../answers';
import { type Awaitable, isPromiseLike } from '../awaitable';
import { DeliveryContext, timeoutError } from '../context';
import { LeaseLostError } from '../errors';
import { runInOrder } from '../dispatch';
import { DEADLINE, type HandlerOutcome, OVERRUN, watchHandlers } from '../in-flight';
import type { Outcome } from '../outcome';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import { step } from '../step';
import { callStore } from '../store-call';
import { runInTracerScope } from '../user-code';
import { runGuarded } from './run-guarded';

type RunResult = HandlerOutcome | typeof DEADLINE | typeof OVERRUN;

/** Runs the handlers: undefined once they ended (settle goes on), or the deadline's or the overrun's outcome. */
export const runHandlers = step({ call: startHandlers, answered: ended });

function ended(state: ReceiverState, attempt: Attempt, result: RunResult): Outcome | undefined {
  if (result === OVERRUN) return overran(state, attempt);
  if (result !== DEADLINE) {
    attempt.handlersOutcome = result;
    return undefined;
  }
  // The handlers go on; when they end the record is completed or released, so the service's next
  // attempt gets a duplicate answer or runs them again.
  attempt.context?.abort();
  attempt.outcome = 'deadline';
  settleWhenEnded(attempt);
  return { kind: 'unavailable', refusal: answers.deadlinePassed(state.config.deadlineMs) };
}

/**
 * A worker's handlers ran past maxRunMs (receive mode answered at the deadline long before): the job
 * fails like a thrown error, so the queue retries it and its slot is free, whatever the handler does.
 * Its leases lapse rather than being released, so the retry waits for them (a live handler may still
 * finish, and then completes the delivery as it would have).
 */
function overran(state: ReceiverState, attempt: Attempt): Outcome {
  attempt.outcome = 'failed';
  attempt.error = new Error(
    `hookline: the handlers of ${attempt.delivery.deliveryId} ran past maxRunMs (${state.config.maxRunMs} ms); the job is retried once their leases lapse`,
  );
  settleWhenEnded(attempt);
  return { kind: 'failed', error: attempt.error };
}

/** The attempt ended before its handlers did: settle runs once they end (the pipeline, `goesOn`). */
function settleWhenEnded(attempt: Attempt): void {
  const { settled } = attempt;
  if (settled === undefined) return;
  attempt.goesOn = settled.then((late) => {
    attempt.handlersOutcome = late;
  });
}

/** Calls the handlers: their outcome when they all returned at once, or when they end, the deadline or the overrun. */
function startHandlers(state: ReceiverState, attempt: Attempt): Awaitable<RunResult> {
  const context = new DeliveryContext(attempt.headers, attempt.receivedAt, attempt.claims, attempt.secretIndex);
  attempt.context = context;
  // Read only by the `handled` hook: no clock read per delivery when nobody listens.
  if (hasListeners(state, 'handled')) attempt.startedAt = Date.now();
  const scope = attempt.trace?.runInScope;
  const { handlers, guarded } = attempt.matched;
  let running: Promise<void> | undefined;
  try {
    if (guarded !== undefined)
      running =
        scope === undefined
          ? runGuarded(state, attempt, context)
          : runInTracerScope(state, scope, () => runGuarded(state, attempt, context));
    else if (scope === undefined) running = runInOrder(handlers, attempt.delivery, context);
    else running = runInTracerScope(state, scope, () => runInOrder(handlers, attempt.delivery, context));
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

/**
 * An extend found the lease gone: it lapsed (a pause, a stalled event loop) and another attempt may
 * have claimed it and be running the same handlers. The handlers' signal is aborted with a
 * LeaseLostError, their fence: a handler that checks it stops before it writes over the newer run.
 */
function leaseLost(state: ReceiverState, attempt: Attempt, key: string, owned: boolean): void {
  if (owned) return;
  const what = key === attempt.key ? attempt.delivery.deliveryId : key;
  const error = new LeaseLostError(
    `hookline: lost the lease on ${what} while its handlers ran: another attempt may be running them now, so this one must not write`,
    key,
  );
  attempt.context?.abort(error);
  reportError(state, error, { phase: 'store', delivery: attempt.delivery });
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
