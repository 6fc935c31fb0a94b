/**
 * The context object of one delivery's trace, on the ground floor: the attempt carries it
 * (attempt.ts) and diagnostics.ts publishes it, so neither imports the other for it.
 */

/** The outcome as tracing reports it. */
export type TraceOutcome = 'handled' | 'duplicate' | 'unhandled' | 'failed' | 'queued' | 'rejected';

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
  /**
   * The store's count of claims of the delivery's key, this one included: set once claimed (never on
   * answer-fast mode's receipt, which claims nothing). A retry that finds the key free claims again.
   */
  claims?: number;
  /** Work mode: the job's try as its queue counts it (1 for the first), known from the start. */
  tries?: number;
  outcome?: TraceOutcome;
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
  storeMs: { claim?: number; complete?: number; release?: number };
  /** Answer-fast mode's receipt: the queue backend's name (`'bullmq'`, `'sqs'`…), set when the enqueue starts. */
  queue?: string;
  /** Milliseconds each queue operation took (answer-fast mode's receipt: the enqueue). */
  queueMs?: { enqueue?: number };
  /** W3C trace context: a subscriber may set it at `start` (receive) and the core carries it in a queued job; set from the job (work). */
  traceparent?: string;
  tracestate?: string;
  /** A subscriber may set it at `start`: the handlers then run inside it (to make a span the active one). */
  runInScope?: <T>(fn: () => T) => T;
}
