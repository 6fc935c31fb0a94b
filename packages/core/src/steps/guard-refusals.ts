/**
 * The refusals a guard gives instead of a handler's own outcome, marked as such so that the steps after
 * it never mistake one for what a handler threw (a handler may throw any HooklineError of its own):
 *
 * - `wait`: the handler cannot run yet (the delivery, its record or its resource is held by another
 *   attempt, or its predecessor has not been seen). 409 with Retry-After on receipt; in a queue worker the job waits
 *   without spending a try.
 * - `unavailable`: a guard's store call failed or timed out. Answered as the claim's would be
 *   (store-failure.ts: 503, or 500 for a store that is not set up or refused the key); nothing more ran.
 * - `misconfigured`: the guard's own functions gave something it cannot use (a version that is not a
 *   finite number, a key that is not a string). The handler did not run; 500 CONFIGURATION_ERROR,
 *   reported like a handler's failure, since a deploy must fix it.
 */
import * as answers from '../answers';
import { HooklineError } from '../errors';
import { RETRY_SCHEDULE_MS } from '../service-schedule';

export type GuardRefusalKind = 'wait' | 'unavailable' | 'misconfigured';

/** Why a guard asks to wait: `details.reason` of the 409. */
export type WaitReason = 'in_progress' | 'handler_in_progress' | 'resource_busy' | 'predecessor_not_seen';

const GUARD = Symbol('hookline.guard-refusal');

/** What a guard's refusal carries beside its answer. */
export interface GuardRefusal {
  readonly kind: GuardRefusalKind;
  /** For `wait`: how long the holder's lease has left, or the service's next gap (a predecessor). */
  readonly waitMs: number;
  /** For `wait`: why. */
  readonly reason?: WaitReason;
}

interface Marked {
  [GUARD]?: GuardRefusal;
}

function mark<E extends HooklineError>(error: E, refusal: GuardRefusal): E {
  (error as Marked)[GUARD] = refusal;
  return error;
}

/** What kind of guard refusal `error` is (and how long it asks to wait), or undefined for anything else. */
export function guardRefusal(error: unknown): GuardRefusal | undefined {
  return typeof error === 'object' && error !== null ? (error as Marked)[GUARD] : undefined;
}

/** A guard that cannot run the handler now: 409 with Retry-After, `details.reason` saying why. */
export function waitRefusal(retryAfterMs: number, reason: WaitReason): HooklineError {
  const error = answers.inFlight(retryAfterMs);
  (error.details as Record<string, unknown>).reason = reason;
  return mark(error, { kind: 'wait', waitMs: retryAfterMs, reason });
}

/** A guard's store call failed: its refusal (`storeFailure()`), marked as the guard's and not the handler's. */
export function storeRefusal(refusal: HooklineError): HooklineError {
  return mark(refusal, { kind: 'unavailable', waitMs: 0 });
}

/** The guard's key or version function gave something unusable: the handler's configuration error. */
export function guardMisconfigured(handler: string, what: 'key' | 'version', message: string, cause?: unknown): HooklineError {
  const reason = what === 'key' ? 'order_key_invalid' : 'order_version_invalid';
  return mark(
    new HooklineError('CONFIGURATION_ERROR', `receiver.on(…, { name: '${handler}', order }): ${message}`, {
      details: { reason, handler },
      ...(cause === undefined ? {} : { cause }),
    }),
    { kind: 'misconfigured', waitMs: 0 },
  );
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
