import type { HandlerContext } from './context';
import type { Delivery, DeliveryOf, EventMap, UnknownDelivery } from './events';
import type { ErrorDetails, HooklineErrorCode } from './errors';

/** Any delivery the receiver can see: a known event's or an unknown one's. */
export type AnyDelivery<E extends EventMap> = DeliveryOf<E, keyof E> | UnknownDelivery;

/** Lifecycle hooks, for logging and metrics. They never change the answer; a hook that throws goes to `onError`. */
export interface ReceiverHooks<E extends EventMap> {
  /** A verified, well-formed delivery arrived (before de-duplication). */
  received: (info: { delivery: AnyDelivery<E> }) => void;
  /** A repeat: `completed` (answered 200, handlers not run) or `in_progress` (answered 409). */
  duplicate: (info: { delivery: AnyDelivery<E>; state: 'completed' | 'in_progress' }) => void;
  /** Every handler finished; the delivery is completed. */
  handled: (info: { delivery: AnyDelivery<E>; context: HandlerContext; durationMs: number }) => void;
  /** A handler threw: `permanent` for `PermanentFailure` (answered 200), otherwise answered 500 and retried. */
  failed: (info: { delivery: AnyDelivery<E>; context: HandlerContext; error: unknown; permanent: boolean }) => void;
  /** An ordering guard skipped a delivery not newer than the last one processed for its resource (answered 200). */
  stale: (info: { delivery: AnyDelivery<E>; handler: string; version: number; current: number }) => void;
  /** No handler matched the event (answered 200). */
  unhandled: (info: { delivery: AnyDelivery<E> }) => void;
  /**
   * The request was refused before any handler: bad signature, bad envelope, too large, store down…
   * A queue worker's job that waits (its delivery, record or resource held elsewhere) is not refused:
   * it is not reported here.
   */
  rejected: (info: { status: number; code: HooklineErrorCode; message: string; details?: ErrorDetails }) => void;
}

/**
 * Where an error reported to `onError` came from: a handler, the idempotency store, the queue of
 * answer-fast mode (its enqueue, a worker's close), a hook, the secret resolver, the configuration, or
 * the receiver itself.
 */
export interface ErrorInfo {
  phase: 'handler' | 'store' | 'queue' | 'hook' | 'secret' | 'configuration' | 'internal';
  delivery?: Delivery<string, unknown>;
}

/** Receives errors the receiver answered for but the application should hear about. May be async: a rejection is written to `console.error`. */
export type ErrorListener = (error: unknown, info: ErrorInfo) => unknown;
