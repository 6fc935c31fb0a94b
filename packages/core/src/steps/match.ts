/**
 * Step 2, match: the handlers the delivery's event runs (dispatch.ts, cached per event name), after
 * the `received` hook. None: 200 `unhandled`, and nothing is stored, so a later deploy that adds a
 * handler still gets the service's retries.
 */
import * as answers from '../answers';
import type { Attempt } from '../attempt';
import { emit, hasListeners, type ReceiverState } from '../receiver-state';

/** Undefined once the attempt has handlers to run (the next step goes on), or the answer for an event nobody handles. */
export function match(state: ReceiverState, attempt: Attempt): answers.ReceiverAnswer | undefined {
  const { delivery } = attempt;
  if (hasListeners(state, 'received')) emit(state, 'received', { delivery });
  attempt.matched = state.registry.match(delivery.event);
  if (attempt.matched.handlers.length > 0) return undefined;
  attempt.outcome = 'unhandled';
  if (hasListeners(state, 'unhandled')) emit(state, 'unhandled', { delivery });
  return answers.unhandledAnswer();
}
