/** Headers as node:http gives them: lower-case names, a string or an array for repeated ones. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

/** Either a Web `Headers` or node's plain record; the Node hot path never builds a `Headers`. */
export type HeadersInput = Headers | IncomingHeaders;

/** The three headers the service sends with every delivery (docs/service-contract.md §2.2). */
export const SIGNATURE_HEADER = 'x-service-signature';
/** The event name header; not signed, so it must agree with the body's `event` or the delivery is a 400. */
export const EVENT_HEADER = 'x-service-event';
/** The delivery id header; not signed, so it must agree with the body's `deliveryId` or the delivery is a 400. */
export const DELIVERY_ID_HEADER = 'x-service-delivery-id';

/**
 * One header's value, `undefined` when absent. Repeated headers come back joined with ", " as
 * `Headers.get` does, so a doubled signature header is never mistaken for a single valid one.
 * `name` must be lower-case.
 *
 * @example
 * const signature = readHeader(req.headers, SIGNATURE_HEADER); // node's record or a Web Headers
 */
export function readHeader(headers: HeadersInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as IncomingHeaders)[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
