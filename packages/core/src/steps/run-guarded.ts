/**
 * Step 4a, for handlers registered with options (`on(name, handler, { name, order, schema, transactional })`),
 * one after another like the plain path, each through the guards it asked for:
 *
 * - per-handler completion (`completion: 'handler'`, and every transactional handler): a record per
 *   handler (`<delivery key>#<name>`) claimed and completed through the store contract, so a retry
 *   runs only the handlers that have not succeeded. A failing handler does not stop the next ones;
 *   the first failure is rethrown once all ran;
 * - an ordering guard: a lease per resource so its deliveries never run concurrently, and a version
 *   record (compare-and-set) so an older delivery never runs after a newer one;
 * - a schema: `data` is checked (and transformed) before the handler sees it;
 * - a transaction: the handler's writes and its completion record commit together.
 *
 * Every lease taken here is held under the attempt's token and listed on the attempt (`holdLease`),
 * so the delivery's heartbeat renews it for as long as the handlers run and `maxRunMs` ends them all
 * together. The version advances BEFORE a handler's record is completed (or in the same transaction):
 * whatever instant a process dies at, a completed handler has an advanced version, and an older
 * delivery can never run after it.
 *
 * The files follow the lease protocol's model (spec/lease-protocol.pml), step by step: this one, its
 * step 2 (h's record claimed; completed ⇒ skipped, held ⇒ wait); guard/order-key.ts, the guard's own
 * functions before anything is claimed; guard/order-lock.ts, steps 3 to 7 (the lock, the version read,
 * the call, the two-try advance, h's record completed, the lock released); guard/call.ts, "run h"
 * (schema and transaction); guard/store-calls.ts, the store calls they all make (steps 6 and 7).
 */
import { type Attempt, holdLease } from '../attempt';
import type { DeliveryContext } from '../context';
import type { HandlerEntry } from '../handler-options';
import { type ReceiverState, reportError } from '../receiver-state';
import type { ClaimResult } from '../store';
import { handlerRecordKey } from '../store-keys';
import { waitStop } from './guard-refusals';
import { guardOf } from './guard/order-key';
import { guardedCall } from './guard/order-lock';
import { releaseLease, store, storeCall } from './guard/store-calls';

/** Runs every guarded entry; rejects with the first failure once all ran. */
export async function runGuarded(state: ReceiverState, attempt: Attempt, context: DeliveryContext): Promise<void> {
  let firstError: unknown;
  let failed = false;
  for (const entry of attempt.matched.guarded ?? []) {
    try {
      await runEntry(state, attempt, entry, context);
    } catch (error) {
      if (!failed) {
        failed = true;
        firstError = error;
      } else {
        reportError(state, error, { phase: 'handler', delivery: attempt.delivery });
      }
      // Without per-handler records a retry re-runs everything: stop at the first failure, as the plain path does.
      if (!tracked(state, entry)) break;
    }
  }
  if (failed) throw firstError;
}

/** Whether the handler has a completion record of its own. */
function tracked(state: ReceiverState, entry: HandlerEntry): boolean {
  return entry.name !== undefined && (state.config.completion === 'handler' || entry.transactional);
}

/** Model step 2, h's record: completed ⇒ h succeeded on an earlier attempt, skipped; held by another attempt ⇒ wait. */
async function runEntry(state: ReceiverState, attempt: Attempt, entry: HandlerEntry, context: DeliveryContext): Promise<void> {
  // The guard's own functions first: a key or version it cannot use is refused before anything is claimed.
  const guard = entry.order === undefined ? undefined : guardOf(attempt, entry, entry.order);
  if (!tracked(state, entry)) return guardedCall(state, attempt, entry, context, undefined, guard);
  const key = handlerRecordKey(attempt.key, entry.name as string);
  const claim = await storeCall<ClaimResult>(state, attempt, 'claim', () => store(state).claim(key, attempt.token, state.config.leaseMs));
  if (claim.state === 'completed') return; // succeeded on an earlier attempt
  if (claim.state === 'in_progress') throw waitStop(claim.retryAfterMs, 'handler_in_progress');
  holdLease(attempt, key);
  try {
    await guardedCall(state, attempt, entry, context, key, guard);
  } catch (error) {
    // storeCall reported a failed release already (the store's own error); the record's lease lapses
    // on its own, and the handler's error is what answers.
    await releaseLease(state, attempt, key).catch(() => {});
    throw error;
  }
}
