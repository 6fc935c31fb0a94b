/**
 * How one delivery's way through the steps ended, as the steps decided it, in the receiver's own
 * terms: no HTTP status here. Every step returns an `Outcome` (it ends the attempt) or undefined (the
 * next step goes on). Two renderers read it: answers.ts turns it into the receipt's HTTP answer
 * (`outcomeAnswer`), job-result.ts into a queue worker's `JobResult`. So "a delivery that must wait is
 * not a failure" is decided once, by a step returning `wait`, and each mode says it its own way: a 409
 * with Retry-After on receipt, a delay without spending a try in a worker.
 */
import type { HooklineError } from './errors';

/** Why a delivery must wait: another attempt holds it, its handler's record or its resource, or its predecessor was not seen. */
export type WaitReason = 'in_progress' | 'handler_in_progress' | 'resource_busy' | 'predecessor_not_seen';

export type Outcome =
  /** The handlers ran to success. */
  | { readonly kind: 'done' }
  /** A repeat of a delivery that was completed before: nothing ran. */
  | { readonly kind: 'duplicate' }
  /** No handler takes the event: nothing ran, nothing is stored. */
  | { readonly kind: 'unhandled' }
  /** Answer-fast mode: the delivery is durably in the queue. */
  | { readonly kind: 'queued' }
  /** It cannot run yet: `waitMs` is what the holder's lease has left, or the service's next gap (a predecessor). */
  | { readonly kind: 'wait'; readonly waitMs: number; readonly reason: WaitReason }
  /**
   * Something it needs did not answer, or not in time: the store, the queue, the deadline on receipt.
   * `refusal` says which and why in the service's error shape (code, message, details); a store that
   * is not set up names the fix. (A request refused before it is admitted has no attempt and no
   * outcome: admission throws its refusal, and the pipeline answers it.)
   */
  | { readonly kind: 'unavailable'; readonly refusal: HooklineError }
  /** A handler's ordering guard gave something it cannot use: the handler did not run; a deploy must fix it. */
  | { readonly kind: 'misconfigured'; readonly refusal: HooklineError }
  /** A handler threw (or ran past `maxRunMs` in a worker): retried. */
  | { readonly kind: 'failed'; readonly error: unknown }
  /** A handler threw `PermanentFailure`: never retried. */
  | { readonly kind: 'permanent'; readonly error: unknown };

// The outcomes without facts, made once: the synchronous path allocates none.
export const DONE: Outcome = { kind: 'done' };
export const DUPLICATE: Outcome = { kind: 'duplicate' };
export const UNHANDLED: Outcome = { kind: 'unhandled' };
export const QUEUED: Outcome = { kind: 'queued' };

/** A delivery that must wait. */
export function waitOutcome(waitMs: number, reason: WaitReason): Outcome {
  return { kind: 'wait', waitMs, reason };
}
