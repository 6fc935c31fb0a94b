/**
 * The channels `@hookline/core` publishes on `node:diagnostics_channel`. Their messages' types are the
 * core's own, imported as types only: this package has no run-time dependency on the core, and the
 * channel names are the link.
 */
export type { DeliveryTrace, QueueOperationMessage, StoreOperationMessage } from '@hookline/core/adapter';

/** The tracing channel: one trace (start, end, error?, asyncStart, asyncEnd) per delivery. */
export const DELIVERY_CHANNEL = 'hookline:delivery';
/** The plain channel: one message per store operation. */
export const STORE_CHANNEL = 'hookline:store';
/** The plain channel: one message per queue operation (answer-fast mode's enqueue). */
export const QUEUE_CHANNEL = 'hookline:queue';

/** A tracing channel's sub-channel names (what `diagnostics_channel.tracingChannel(name)` publishes on). */
export const DELIVERY_START = `tracing:${DELIVERY_CHANNEL}:start`;
export const DELIVERY_ASYNC_END = `tracing:${DELIVERY_CHANNEL}:asyncEnd`;
