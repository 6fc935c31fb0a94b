/**
 * A guard's store calls (step 4a, run-guarded.ts and order-lock.ts): each bounded by `storeTimeoutMs`
 * like every other store call (`callStore`), and a failure ended as the claim's would be (store-failure.ts)
 * rather than counted as the handler's. Completing and releasing a record or a lock gives its lease up
 * first, so the heartbeat no longer renews it. In the lease protocol's model (spec/lease-protocol.pml):
 * step 6, complete h's record; step 7, release the lock.
 */
import { type Attempt, dropLease } from '../../attempt';
import type { Awaitable } from '../../awaitable';
import { type ReceiverState, reportError } from '../../receiver-state';
import { completionRetentionMs } from '../../retention';
import type { IdempotencyStore } from '../../store';
import { callStore } from '../../store-call';
import { storeFailure } from '../../store-failure';
import { storeStop } from '../guard-refusals';

export function store(state: ReceiverState): IdempotencyStore {
  return state.config.store;
}

/** A guard's store call; a failure stops the handlers with the guard's `unavailable` outcome (guard-refusals.ts). */
export async function storeCall<T>(
  state: ReceiverState,
  attempt: Attempt,
  operation: 'claim' | 'complete' | 'release' | 'readVersion' | 'advanceVersion',
  call: () => Awaitable<T>,
): Promise<T> {
  try {
    return await callStore(attempt, operation, state.config.storeTimeoutMs, call);
  } catch (error) {
    throw storeStop(storeFailure(state, error, attempt.delivery));
  }
}

/** Model step 6: complete h's record (answered false: the record was lost, reported, and on). */
export async function completeRecord(state: ReceiverState, attempt: Attempt, key: string): Promise<void> {
  dropLease(attempt, key); // before the call: a heartbeat must not renew a record being completed
  const owned = await storeCall(state, attempt, 'complete', () =>
    store(state).complete(key, attempt.token, completionRetentionMs(state, attempt)),
  );
  if (!owned)
    reportError(state, new Error(`hookline: lost the record ${key} before it was completed`), {
      phase: 'store',
      delivery: attempt.delivery,
    });
}

/** Model step 7 (and a failed handler's record): give the lease back; a failure is reported by storeCall, the lease lapses. */
export function releaseLease(state: ReceiverState, attempt: Attempt, key: string): Promise<boolean> {
  dropLease(attempt, key);
  return storeCall(state, attempt, 'release', () => store(state).release(key, attempt.token));
}
