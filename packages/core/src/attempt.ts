/**
 * "Attempt" names one thing in the receiver: the handling of one request of the service (its attempt
 * at a delivery) or of one try of a queued job, the `Attempt` below. What counts attempts has a name
 * of its own: `claims`, the store's count of claims of the delivery's key (the store contract and the
 * handler's context call it `attempt`), and a queue's try of a job (`QueueJob.attempt`).
 */
import type { DeliveryContext } from './context';
import type { DeliveryTrace } from './delivery-trace';
import type { Matched } from './dispatch';
import { LeaseLostError } from './errors';
import type { Delivery } from './events';
import type { HeadersInput } from './headers';
import type { HandlerOutcome } from './in-flight';
import { deliveryKey } from './store-keys';

/**
 * How one attempt ended, as its trace reports it (diagnostics.ts). The steps set it beside the
 * `Outcome` they return (outcome.ts), which is what the two renderers read. `in_progress` is a
 * duplicate whose first copy still runs; `deadline` ended at the deadline while handlers go on.
 */
export type AttemptOutcome =
  | 'handled'
  | 'duplicate'
  | 'in_progress'
  | 'unhandled'
  | 'failed'
  | 'permanent'
  | 'deadline'
  | 'queued'
  | 'rejected';

/**
 * One delivery attempt, carried from step to step: what verify-and-admit learnt, the store key and
 * lease token the claim used, the handlers' context, and how it ended. Made once per delivery, in one
 * place, so every attempt has the same shape.
 */
export interface Attempt {
  /** `receive`: a request the receiver verified; `work`: a queued delivery a worker runs (trusted, never re-verified). */
  readonly mode: 'receive' | 'work';
  readonly delivery: Delivery<string, unknown>;
  /**
   * The verified body as text (receive mode only): answer-fast mode stores it as the job's delivery
   * rather than serialising the parsed one again (queue.ts, `queuedDeliveryJson`).
   */
  readonly bodyText: string | undefined;
  /** The body's timestamp, in milliseconds since the epoch. */
  readonly timestampMs: number;
  /** When the receiver got the request, in milliseconds since the epoch. */
  readonly receivedAt: number;
  /** Index of the secret that verified the signature. */
  readonly secretIndex: number;
  /** The request's headers; the worker has none of its own, so it gets an empty record. */
  readonly headers: HeadersInput;
  /** The store key: `keyPrefix` and the deliveryId. */
  key: string;
  /**
   * The namespace and the tenant's scope (per-tenant secrets): every key of this delivery starts with
   * it. Changed only before the claim, by `useKeys` (a receipt handled under the worker's keys).
   */
  keyPrefix: string;
  /** The lease token of this attempt's claim ('' until claimed). */
  token: string;
  /** The store's count of claims of this key, this one included (0 until claimed). */
  claims: number;
  /**
   * The other leases this attempt holds under its token while its handlers run (per-handler records,
   * ordering locks): the heartbeat renews them with the delivery's own, so none lapses under a live
   * handler. `undefined` while there are none (most deliveries), so the plain path allocates nothing.
   */
  heldLeases: string[] | undefined;
  /** The handlers the event runs (and their options, when any has some). */
  matched: Matched;
  context: DeliveryContext | undefined;
  /** When the handlers started, for the `handled` hook's duration (0 when nobody listens). */
  startedAt: number;
  outcome: AttemptOutcome | undefined;
  /** What a handler threw, for `failed` and `permanent`. */
  error: unknown;
  /** The handlers' final outcome when they outlive the deadline (the answer was 503 already). */
  settled: Promise<HandlerOutcome> | undefined;
  /** How the handlers ended (step 4a), for settle (step 5) to record: undefined for success. */
  handlersOutcome: HandlerOutcome;
  /**
   * Set by a step that ends the attempt while its handlers go on (the deadline on receipt, `maxRunMs`
   * in a worker): resolves once they ended, and the pipeline then runs the steps after it (settle).
   */
  goesOn: Promise<void> | undefined;
  /** The diagnostics channel's context, when something subscribes. */
  trace: DeliveryTrace | undefined;
}

const NOTHING_MATCHED: Matched = { handlers: [], guarded: undefined };

export function newAttempt(fields: {
  mode: Attempt['mode'];
  delivery: Delivery<string, unknown>;
  bodyText?: string;
  timestampMs: number;
  receivedAt: number;
  secretIndex: number;
  headers: HeadersInput;
  keyPrefix: string;
  trace: DeliveryTrace | undefined;
}): Attempt {
  return {
    mode: fields.mode,
    delivery: fields.delivery,
    bodyText: fields.bodyText,
    timestampMs: fields.timestampMs,
    receivedAt: fields.receivedAt,
    secretIndex: fields.secretIndex,
    headers: fields.headers,
    key: deliveryKey(fields.keyPrefix, fields.delivery.deliveryId),
    keyPrefix: fields.keyPrefix,
    token: '',
    claims: 0,
    heldLeases: undefined,
    matched: NOTHING_MATCHED,
    context: undefined,
    startedAt: 0,
    outcome: undefined,
    error: undefined,
    settled: undefined,
    handlersOutcome: undefined,
    goesOn: undefined,
    trace: fields.trace,
  };
}

/** Moves the attempt to the keys under `keyPrefix`, before anything is claimed. */
export function useKeys(attempt: Attempt, keyPrefix: string): void {
  attempt.keyPrefix = keyPrefix;
  attempt.key = deliveryKey(keyPrefix, attempt.delivery.deliveryId);
}

/** Records that the attempt now holds a lease on `key` (its token's), for the heartbeat to renew. */
export function holdLease(attempt: Attempt, key: string): void {
  if (attempt.heldLeases === undefined) attempt.heldLeases = [key];
  else attempt.heldLeases.push(key);
}

/** The attempt gave the lease on `key` up (completed or released it): the heartbeat leaves it alone. */
export function dropLease(attempt: Attempt, key: string): void {
  const held = attempt.heldLeases;
  const at = held === undefined ? -1 : held.indexOf(key);
  if (at >= 0) held?.splice(at, 1);
}

/**
 * Follows a queue job's fence (`QueueJob.signal`) while the attempt runs: once the consumer aborts it
 * (a job handed back whose lease may have lapsed since), the handlers' signal is aborted with a
 * LeaseLostError on the delivery's key, as when the heartbeat finds the lease gone. Returns the unfollow.
 */
export function followJobFence(fence: AbortSignal, attempt: Attempt): () => void {
  const stop = () => {
    const reason: unknown = fence.reason;
    const why = reason instanceof Error ? reason.message : String(reason);
    const error = new LeaseLostError(
      `hookline: the lease on ${attempt.delivery.deliveryId} may have lapsed while its handlers ran (${why}): another attempt may be running them now, so this one must not write`,
      attempt.key,
    );
    error.cause = reason;
    attempt.context?.abort(error);
  };
  if (fence.aborted) {
    stop();
    return () => {};
  }
  fence.addEventListener('abort', stop, { once: true });
  return () => fence.removeEventListener('abort', stop);
}
