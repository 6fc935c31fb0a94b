/**
 * How a guard stops a handler from running (the delivery, its record or its resource is held, its
 * predecessor was not seen, a store call failed, the guard's own functions gave something unusable):
 * it throws out of the handlers' run an error that carries the outcome it decided (outcome.ts), and
 * settle (step 5) ends the attempt with that outcome. Recognised by the guard's own mark, never by a
 * code: a handler may throw any HooklineError of its own, and that is a failure like any other.
 *
 * - `wait`: the handler cannot run yet. Rendered as 409 with Retry-After on receipt, as a delay
 *   without spending a try in a queue worker.
 * - `unavailable`: a guard's store call failed or timed out, answered as the claim's would be
 *   (store-failure.ts); nothing more ran.
 * - `misconfigured`: the guard's key or version function gave something it cannot use. The handler
 *   did not run; reported like a handler's failure, since a deploy must fix it.
 */
import { HooklineError } from '../errors';
import { type Outcome, type WaitReason, waitOutcome } from '../outcome';
import { RETRY_SCHEDULE_MS } from '../service-schedule';

const GUARD = Symbol('hookline.guard-outcome');

interface Marked {
  [GUARD]?: Outcome;
}

function mark<E extends Error>(error: E, outcome: Outcome): E {
  (error as Marked)[GUARD] = outcome;
  return error;
}

/** The outcome a guard stopped the handlers with, or undefined for anything else (a handler's own error). */
export function guardOutcome(error: unknown): Outcome | undefined {
  return typeof error === 'object' && error !== null ? (error as Marked)[GUARD] : undefined;
}

/** A guard that cannot run the handler now: `waitMs` is what the holder's lease has left, or the service's next gap. */
export function waitStop(waitMs: number, reason: WaitReason): Error {
  return mark(new Error(`hookline: the handler cannot run yet (${reason}); retry in ${waitMs} ms`), waitOutcome(waitMs, reason));
}

/** A guard's store call failed: its refusal (`storeFailure()`), marked as the guard's and not the handler's. */
export function storeStop(refusal: HooklineError): HooklineError {
  return mark(refusal, { kind: 'unavailable', refusal });
}

/** The guard's key or version function gave something unusable: the handler's configuration error. */
export function guardMisconfigured(handler: string, what: 'key' | 'version', message: string, cause?: unknown): HooklineError {
  const reason = what === 'key' ? 'order_key_invalid' : 'order_version_invalid';
  const refusal = new HooklineError('CONFIGURATION_ERROR', `receiver.on(…, { name: '${handler}', order }): ${message}`, {
    details: { reason, handler },
    ...(cause === undefined ? {} : { cause }),
  });
  return mark(refusal, { kind: 'misconfigured', refusal });
}

/**
 * How long an early delivery waits for its predecessor before its next try: the gap the service
 * leaves before its next attempt (docs/service-contract.md, the retry schedule), so a queue worker
 * waits as long as the service would have. `claims` counts this delivery's claims, this one included.
 */
export function predecessorWaitMs(claims: number): number {
  return RETRY_GAPS_MS[Math.min(Math.max(claims, 1), RETRY_GAPS_MS.length) - 1] as number;
}

/** The service's gaps between its 7 attempts: 30 s, 2 min, 10 min, 1 h, 6 h, 24 h. */
const RETRY_GAPS_MS = RETRY_SCHEDULE_MS.slice(1);
