/**
 * The ordering guard around one handler's call (step 4a), in the lease protocol's model's steps
 * (spec/lease-protocol.pml): 3, the resource's lock, under the attempt's token (not acquired: wait,
 * `resource_busy`); 4, the version read (not newer than the resource's: stale, skipped; its
 * predecessor not seen yet: wait); the call (call.ts); 5, the version advance, tried twice; 6, h's
 * record completed (store-calls.ts), only after the advance; 7, the lock released, or left to lapse
 * when both tries of the advance failed.
 */
import { type Attempt, dropLease, holdLease } from '../../attempt';
import type { DeliveryContext } from '../../context';
import type { HandlerEntry, OrderGuard } from '../../handler-options';
import { emit, hasListeners, type ReceiverState } from '../../receiver-state';
import type { ClaimResult, IdempotencyStore } from '../../store';
import { predecessorWaitMs, waitStop } from '../guard-refusals';
import { call } from './call';
import type { Guard } from './order-key';
import { completeRecord, releaseLease, store, storeCall } from './store-calls';

/** The ordering guard around the call, when the handler has one; then the version and the record. */
export async function guardedCall(
  state: ReceiverState,
  attempt: Attempt,
  entry: HandlerEntry,
  context: DeliveryContext,
  completionKey: string | undefined,
  guard: Guard | undefined,
): Promise<void> {
  if (guard === undefined) {
    await call(state, attempt, entry, context, completionKey, undefined);
    if (completionKey !== undefined && !entry.transactional) await completeRecord(state, attempt, completionKey);
    return;
  }
  const { order, lockKey, versionKey, version } = guard;
  const lock = await storeCall<ClaimResult>(state, attempt, 'claim', () =>
    store(state).claim(lockKey, attempt.token, state.config.leaseMs),
  );
  if (lock.state !== 'acquired') throw waitStop(lock.state === 'in_progress' ? lock.retryAfterMs : 1000, 'resource_busy');
  holdLease(attempt, lockKey);
  let releaseLock = true;
  try {
    const versions = store(state) as Required<Pick<IdempotencyStore, 'readVersion' | 'advanceVersion'>>;
    const current = await storeCall(state, attempt, 'readVersion', () => versions.readVersion(versionKey));
    if (current !== undefined && version <= current && (order.stale ?? 'skip') === 'skip') {
      if (hasListeners(state, 'stale'))
        emit(state, 'stale', { delivery: attempt.delivery, handler: entry.name as string, version, current });
      if (completionKey !== undefined) await completeRecord(state, attempt, completionKey);
      return;
    }
    if (isEarly(order, version, current, attempt.claims)) throw waitStop(predecessorWaitMs(attempt.claims), 'predecessor_not_seen');
    const retentionMs = state.config.retentionMs;
    if (entry.transactional) {
      await call(state, attempt, entry, context, completionKey, { key: versionKey, version, retentionMs });
      return;
    }
    await call(state, attempt, entry, context, completionKey, undefined);
    // Advanced before the record is completed: a crash or a failed call between the two leaves a handler
    // that will run again (its record is not completed) under a version that already keeps older
    // deliveries out, never a completed handler whose newer state an older delivery may overwrite.
    const failure = await advance(state, attempt, versions, versionKey, version);
    if (failure !== undefined) {
      // Both tries failed, and a call that timed out may still land. Were the lock released now, an
      // older delivery could write its state before that advance lands, and the newer one would then
      // be skipped as stale. Kept (no longer renewed), the lock lapses after leaseMs: the late advance
      // must land before another delivery of the resource can run, or it is as late as a paused process.
      releaseLock = false;
      dropLease(attempt, lockKey);
      throw failure;
    }
    if (completionKey !== undefined) await completeRecord(state, attempt, completionKey);
  } finally {
    // storeCall reported a failed release already; the lock's lease lapses on its own, and the
    // handler's outcome stands (a second report would wrongly say the delivery was not processed).
    if (releaseLock) await releaseLease(state, attempt, lockKey).catch(() => {});
  }
}

/**
 * The version advance after a handler succeeded, tried twice (a store blip rarely lasts two calls):
 * undefined once it answered, or the second try's refusal (503; each failure is reported).
 */
async function advance(
  state: ReceiverState,
  attempt: Attempt,
  versions: Required<Pick<IdempotencyStore, 'advanceVersion'>>,
  versionKey: string,
  version: number,
): Promise<unknown> {
  const once = () =>
    storeCall(state, attempt, 'advanceVersion', () => versions.advanceVersion(versionKey, version, state.config.retentionMs));
  try {
    await once();
    return undefined;
  } catch {
    try {
      await once();
      return undefined;
    } catch (error) {
      return error;
    }
  }
}

/** A delivery whose rank's predecessor has not been processed yet, within the bounded wait. */
function isEarly(
  order: Pick<OrderGuard<unknown>, 'early' | 'firstRank' | 'maxEarlyAttempts'>,
  version: number,
  current: number | undefined,
  claims: number,
): boolean {
  if (order.early !== 'retry' || claims >= (order.maxEarlyAttempts ?? 5)) return false;
  return current === undefined ? version > (order.firstRank ?? 1) : version > current + 1;
}
