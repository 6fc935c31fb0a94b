/**
 * Step 2, match: the handlers the delivery's event runs (dispatch.ts, cached per event name), after
 * the `received` hook. None: `unhandled` (answered 200), and nothing is stored, so a later deploy that
 * adds a handler still gets the service's retries.
 */
import type { Attempt } from '../attempt';
import { type Outcome, UNHANDLED } from '../outcome';
import { emit, hasListeners, type ReceiverState } from '../receiver-state';
import { step } from '../step';

/** Undefined once the attempt has handlers to run (the next step goes on), or `unhandled` for an event nobody handles. */
export const match = step({ call: matchHandlers });

function matchHandlers(state: ReceiverState, attempt: Attempt): Outcome | undefined {
  const { delivery } = attempt;
  if (hasListeners(state, 'received')) emit(state, 'received', { delivery });
  attempt.matched = state.registry.match(delivery.event);
  if (attempt.matched.handlers.length > 0) return undefined;
  attempt.outcome = 'unhandled';
  if (hasListeners(state, 'unhandled')) emit(state, 'unhandled', { delivery });
  return UNHANDLED;
}
