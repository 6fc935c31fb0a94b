import type { Delivery, ServiceEventName, ServiceEvents } from '@hookline/core';
import { fixtures } from './fixtures';
import { createId } from './ids';

/** Fields of the envelope a test may pin instead of the fresh defaults. */
export interface DeliveryOverrides {
  /** @default a fresh `wdl_…` id */
  deliveryId?: string;
  /** ISO 8601 UTC with milliseconds, or a Date. @default now */
  timestamp?: string | Date;
}

/**
 * Builds one delivery as the service would send it: a fresh `wdl_…` id, an ISO 8601 UTC timestamp with
 * milliseconds, and `data` typed by the core's `ServiceEvents` map. `data` is merged over realistic
 * defaults (the event's fixture payload with fresh `msg_`/`call_` ids and times set to the delivery's
 * timestamp), so a test names only the fields it cares about.
 *
 * An event name outside the catalogue is accepted too (the catalogue grows); its default data is `{}`.
 *
 * @example
 * const delivery = createDelivery('message.delivered', { to: '+447700900123' });
 * delivery.data.deliveredAt; // ISO timestamp, typed string
 */
export function createDelivery<N extends ServiceEventName>(
  event: N,
  data?: Partial<ServiceEvents[N]>,
  overrides?: DeliveryOverrides,
): Delivery<N, ServiceEvents[N]>;
export function createDelivery<D extends Record<string, unknown>>(
  event: string,
  data?: D,
  overrides?: DeliveryOverrides,
): Delivery<string, D>;
export function createDelivery(
  event: string,
  data: Record<string, unknown> = {},
  overrides: DeliveryOverrides = {},
): Delivery<string, Record<string, unknown>> {
  const at = overrides.timestamp ?? new Date();
  const timestamp = typeof at === 'string' ? at : at.toISOString();
  const fixture = (fixtures as unknown as Record<string, Delivery<string, Record<string, unknown>> | undefined>)[event];
  const defaults = fixture === undefined ? {} : freshen(fixture.data, timestamp);
  return {
    event,
    timestamp,
    deliveryId: overrides.deliveryId ?? createId('wdl_'),
    data: { ...defaults, ...data },
  };
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const FRESH_PREFIXES = ['msg_', 'call_'];

/** The fixture's payload with new message/call ids and every time set to `timestamp`. */
function freshen(data: Record<string, unknown>, timestamp: string): Record<string, unknown> {
  const ids = new Map<string, string>(); // the same old id maps to the same new one
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === 'string' && ISO_TIME.test(value)) out[key] = timestamp;
    else if (typeof value === 'string' && FRESH_PREFIXES.some((prefix) => value.startsWith(prefix))) {
      const prefix = value.slice(0, value.indexOf('_') + 1);
      if (!ids.has(value)) ids.set(value, createId(prefix));
      out[key] = ids.get(value);
    } else out[key] = Array.isArray(value) ? [...value] : value;
  }
  return out;
}

/**
 * The exact body the service sends for a delivery: compact JSON with the keys in the service's order
 * (event, timestamp, deliveryId, data). Sign and send this string (its UTF-8 bytes), never a second
 * `JSON.stringify` of the object, which may differ.
 *
 * @example
 * const body = serializeDelivery(createDelivery('message.read'));
 * const signature = sign(body, secret);
 */
export function serializeDelivery(delivery: Delivery<string, unknown>): string {
  return JSON.stringify({
    event: delivery.event,
    timestamp: delivery.timestamp,
    deliveryId: delivery.deliveryId,
    data: delivery.data,
  });
}
