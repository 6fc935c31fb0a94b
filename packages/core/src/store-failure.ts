/**
 * What a failed store call is answered with, decided in one place for every step that calls the
 * store before the handlers run (the claim, an ordering guard's lock, record and version):
 *
 * - a `StoreNotSetUpError` (a table, schema or binding is missing): 500 CONFIGURATION_ERROR
 *   `store_not_set_up`. Not reported as an error each time: the refusal itself is the report, written
 *   once (then counted once a minute) without a `logger`, with the store's message naming the fix;
 * - a `StoreDataError` (the backend refused the key itself): 500 INTERNAL_ERROR `store_data_error`;
 * - a call past `storeTimeoutMs`: 503 `store_timeout`; anything else: 503 `store_unavailable`.
 *
 * The last three are reported (`onError`, the logger) with the store's own error.
 */
import * as answers from './answers';
import type { HooklineError } from './errors';
import type { Delivery } from './events';
import { type ReceiverState, reportError } from './receiver-state';
import { StoreDataError, StoreNotSetUpError } from './store';
import { StoreTimeoutError } from './store-call';

export function storeFailure(state: ReceiverState, error: unknown, delivery: Delivery<string, unknown>): HooklineError {
  if (StoreNotSetUpError.is(error)) return answers.storeNotSetUp(error);
  reportError(state, error, { phase: 'store', delivery });
  if (StoreDataError.is(error)) return answers.storeDataError(error);
  return answers.storeUnavailable(error, error instanceof StoreTimeoutError ? 'store_timeout' : 'store_unavailable');
}
