/**
 * What a failed store call is answered with, decided in one place for every step that calls the
 * store before the handlers run (the claim, an ordering guard's lock, record and version):
 *
 * - a `StoreNotSetUpError` (a table, schema or binding is missing): 500 CONFIGURATION_ERROR
 *   `store_not_set_up`. The refusal itself is the report on the log, written once (then counted once a
 *   minute) without a `logger`, with the store's message naming the fix; `onError` listeners hear the
 *   store's error too (phase `store`), the first at once and then at most one a minute, since every
 *   delivery meets it until the deployment is fixed;
 * - a `StoreDataError` (the backend refused the key itself): 500 INTERNAL_ERROR `store_data_error`;
 * - a call past `storeTimeoutMs`: 503 `store_timeout`; anything else: 503 `store_unavailable`.
 *
 * The last three are reported (`onError`, the logger) with the store's own error.
 */
import * as answers from './answers';
import type { HooklineError } from './errors';
import type { Delivery } from './events';
import { NOTE_SUMMARY_MS } from './notes';
import { type ReceiverState, reportError } from './receiver-state';
import { StoreDataError, StoreNotSetUpError } from './store';
import { StoreTimeoutError } from './store-call';
import { callUserCode } from './user-code';

/** When each receiver last told its `onError` listeners that its store is not set up. */
const notSetUpToldAt = new WeakMap<ReceiverState, number>();

export function storeFailure(state: ReceiverState, error: unknown, delivery: Delivery<string, unknown>): HooklineError {
  if (StoreNotSetUpError.is(error)) {
    tellNotSetUp(state, error, delivery);
    return answers.storeNotSetUp(error);
  }
  reportError(state, error, { phase: 'store', delivery });
  if (StoreDataError.is(error)) return answers.storeDataError(error);
  return answers.storeUnavailable(error, error instanceof StoreTimeoutError ? 'store_timeout' : 'store_unavailable');
}

/**
 * Hands a StoreNotSetUpError to the `onError` listeners alone (the logger and the console have the
 * refusal's own line): the first at once, then at most one a minute, so a deployment whose table is
 * missing alerts without an alert per delivery.
 */
function tellNotSetUp(state: ReceiverState, error: Error, delivery: Delivery<string, unknown>): void {
  if (state.errorListeners.length === 0) return;
  const now = Date.now();
  const last = notSetUpToldAt.get(state);
  if (last !== undefined && now - last < NOTE_SUMMARY_MS) return;
  notSetUpToldAt.set(state, now);
  for (const listener of state.errorListeners)
    callUserCode(state, 'an onError listener', () => listener(error, { phase: 'store', delivery }));
}
