/**
 * The contract `@hookline/core` publishes on `node:diagnostics_channel`, restated structurally so this
 * package needs no run-time dependency on the core: the channel names are the link.
 */

/** The tracing channel: one trace (start, end, error?, asyncStart, asyncEnd) per delivery. */
export const DELIVERY_CHANNEL = 'hookline:delivery';
/** The plain channel: one message per store operation. */
export const STORE_CHANNEL = 'hookline:store';

/** A tracing channel's sub-channel names (what `diagnostics_channel.tracingChannel(name)` publishes on). */
export const DELIVERY_START = `tracing:${DELIVERY_CHANNEL}:start`;
export const DELIVERY_ASYNC_END = `tracing:${DELIVERY_CHANNEL}:asyncEnd`;

/** How a delivery ended, as the core's trace reports it. */
export type DeliveryOutcome = 'handled' | 'duplicate' | 'unhandled' | 'failed' | 'queued' | 'rejected';

/** The context object every event of one delivery's trace carries (the same object throughout). */
export interface DeliveryTrace {
  /** `receive`: an HTTP delivery; `work`: a queued delivery run by a worker. */
  mode: 'receive' | 'work';
  /** When the receiver got the request, in milliseconds since the epoch. */
  receivedAt: number;
  /** Set once the envelope is verified (absent for refusals before that). */
  event?: string;
  deliveryId?: string;
  /** The body's timestamp, in milliseconds since the epoch. */
  timestampMs?: number;
  /** The store's count of claims (receive) or the job's try (work). */
  attempt?: number;
  outcome?: DeliveryOutcome;
  /** The HTTP status answered (receive mode). */
  status?: number;
  /** A refusal's code (INVALID_SIGNATURE, PAYLOAD_TOO_LARGE, SERVICE_UNAVAILABLE…). */
  code?: string;
  /** The refusal's `details.issue` or `details.reason` ('mismatch', 'too_old', 'store_unavailable'…). */
  reason?: string;
  /** Outcome `failed` through PermanentFailure (answered 200, not retried). */
  permanent?: boolean;
  /** What a handler threw. */
  error?: unknown;
  /** Milliseconds each store operation took. */
  storeMs: { claim?: number; complete?: number; release?: number; enqueue?: number };
  /** W3C trace context: set at `start` by a subscriber (receive), carried in the queued job, set from the job (work). */
  traceparent?: string;
  tracestate?: string;
  /** Set at `start` by a subscriber: the core runs the handlers inside it. */
  runInScope?: <T>(fn: () => T) => T;
}

/** One message on the store channel. */
export interface StoreOperationMessage {
  operation: 'claim' | 'complete' | 'release' | 'extend' | 'enqueue';
  durationMs: number;
  deliveryId: string;
  error?: unknown;
}
