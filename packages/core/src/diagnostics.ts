/**
 * What the receiver publishes on `node:diagnostics_channel`, for tracers and APMs to subscribe to
 * (`@hookline/otel` does). The core subscribes to nothing, and publishes only while something listens,
 * so an application without a subscriber pays one property read per delivery. On runtimes without
 * `node:diagnostics_channel` (some edge runtimes) nothing is published and everything else works.
 */
import type { Attempt } from './attempt';
import type { DeliveryTrace, TraceOutcome } from './delivery-trace';

/** One trace per delivery: start, end (the synchronous part returned), error (a handler failed), asyncStart, asyncEnd (the answer is known). */
export const DELIVERY_CHANNEL = 'hookline:delivery';
/** One message per store operation: `{ operation, durationMs, deliveryId, error? }`. */
export const STORE_CHANNEL = 'hookline:store';
/** One message per queue operation (answer-fast mode's enqueue): `{ operation, queue, durationMs, deliveryId, error? }`. */
export const QUEUE_CHANNEL = 'hookline:queue';

/** One message on the store channel. */
export interface StoreOperationMessage {
  operation: 'claim' | 'complete' | 'release' | 'extend' | 'readVersion' | 'advanceVersion';
  durationMs: number;
  deliveryId: string;
  error?: unknown;
}

/** One message on the queue channel. */
export interface QueueOperationMessage {
  operation: 'enqueue';
  /** The queue backend's name (`DeliveryQueue.name`). */
  queue: string;
  durationMs: number;
  deliveryId: string;
  error?: unknown;
}

interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}
interface TracingChannel {
  readonly hasSubscribers?: boolean;
  readonly start: Channel;
  readonly end: Channel;
  readonly asyncStart: Channel;
  readonly asyncEnd: Channel;
  readonly error: Channel;
}
interface DiagnosticsChannelModule {
  channel(name: string): Channel;
  tracingChannel(name: string): TracingChannel;
}

// Loaded without a static import so the same bundle runs where the module does not exist.
const channels = (() => {
  try {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const dc = proc?.getBuiltinModule?.('node:diagnostics_channel') as DiagnosticsChannelModule | undefined;
    if (dc === undefined || typeof dc.tracingChannel !== 'function') return undefined;
    return { delivery: dc.tracingChannel(DELIVERY_CHANNEL), store: dc.channel(STORE_CHANNEL), queue: dc.channel(QUEUE_CHANNEL) };
  } catch {
    return undefined;
  }
})();

/** Starts one delivery's trace when something subscribes; `undefined` (and nothing published) otherwise. */
export function startTrace(
  mode: DeliveryTrace['mode'],
  receivedAt: () => number,
  known?: () => Partial<DeliveryTrace>,
): DeliveryTrace | undefined {
  const delivery = channels?.delivery;
  // `start` alone: every tracer subscribes to it (and a TracingChannel's own getter reads all five).
  if (delivery === undefined || !delivery.start.hasSubscribers) return undefined;
  // What is known before the delivery starts (a queued job's event, id, try and trace context) is on
  // the context when `start` is published, so a tracer can use it for the span it starts there.
  const trace: DeliveryTrace = { mode, receivedAt: receivedAt(), storeMs: {} };
  // Copied in only when there is something (a queued job's): spreading an absent object into the
  // literal cost each HTTP delivery ~30 ns (55 rather than 83 ns for the object, in a loop).
  if (known !== undefined) Object.assign(trace, known());
  delivery.start.publish(trace);
  return trace;
}

/** The synchronous part of the delivery returned. */
export function traceReturned(trace: DeliveryTrace): void {
  channels?.delivery.end.publish(trace);
}

const OUTCOMES: Record<NonNullable<Attempt['outcome']>, TraceOutcome> = {
  handled: 'handled',
  duplicate: 'duplicate',
  in_progress: 'duplicate',
  unhandled: 'unhandled',
  failed: 'failed',
  permanent: 'failed',
  deadline: 'failed',
  queued: 'queued',
  rejected: 'rejected',
};

/** The delivery's answer is known: fills the outcome in and publishes error (a handler failed), asyncStart and asyncEnd. */
export function traceSettled(trace: DeliveryTrace, attempt: Attempt | undefined, status: number | undefined): void {
  const delivery = channels?.delivery;
  if (delivery === undefined) return;
  trace.outcome = attempt?.outcome === undefined ? 'rejected' : OUTCOMES[attempt.outcome];
  if (status !== undefined) trace.status = status;
  if (attempt?.outcome === 'permanent') trace.permanent = true;
  if (attempt?.outcome === 'failed' || attempt?.outcome === 'permanent') {
    trace.error = attempt.error;
    delivery.error.publish(trace);
  }
  delivery.asyncStart.publish(trace);
  delivery.asyncEnd.publish(trace);
}

/** A refusal's code and reason, for the trace. */
export function traceRefusal(trace: DeliveryTrace, code: string, details: Record<string, unknown> | undefined): void {
  trace.code = code;
  const reason = details?.issue ?? details?.reason;
  if (typeof reason === 'string') trace.reason = reason;
}

/** The store operations a delivery's trace keeps the time of (the others go to the store channel only). */
const TRACED_OPERATIONS = { claim: true, complete: true, release: true };

/** Whether store operations should be timed: a delivery trace or a store-channel subscriber wants the figure. */
export function storeTimed(attempt: Attempt): boolean {
  return attempt.trace !== undefined || channels?.store.hasSubscribers === true;
}

/** Publishes one store operation's timing (and records it on the delivery's trace). */
export function traceStoreOperation(
  attempt: Attempt,
  operation: StoreOperationMessage['operation'],
  durationMs: number,
  error?: unknown,
): void {
  if (attempt.trace !== undefined && operation in TRACED_OPERATIONS)
    attempt.trace.storeMs[operation as keyof DeliveryTrace['storeMs']] = durationMs;
  const store = channels?.store;
  if (store?.hasSubscribers === true) {
    const message: StoreOperationMessage = { operation, durationMs, deliveryId: attempt.delivery.deliveryId };
    if (error !== undefined) message.error = error;
    store.publish(message);
  }
}

/** Whether queue operations should be timed: a delivery trace or a queue-channel subscriber wants the figure. */
export function queueTimed(attempt: Attempt): boolean {
  return attempt.trace !== undefined || channels?.queue.hasSubscribers === true;
}

/** Publishes one queue operation's timing on the queue channel (and records it on the delivery's trace). */
export function traceQueueOperation(
  attempt: Attempt,
  queue: string,
  operation: QueueOperationMessage['operation'],
  durationMs: number,
  error?: unknown,
): void {
  const { trace } = attempt;
  if (trace !== undefined) trace.queueMs = { ...trace.queueMs, [operation]: durationMs };
  const channel = channels?.queue;
  if (channel?.hasSubscribers === true) {
    const message: QueueOperationMessage = { operation, queue, durationMs, deliveryId: attempt.delivery.deliveryId };
    if (error !== undefined) message.error = error;
    channel.publish(message);
  }
}
