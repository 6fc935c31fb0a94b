import type { Delivery } from '@hookline/core';
import { serializeDelivery } from './create-delivery';
import { sign, type BodyBytes } from './sign';

/** The three headers the service sends (docs/service-contract.md §2.2), plus the content type. */
export const HEADER_NAMES = {
  signature: 'x-service-signature',
  event: 'x-service-event',
  deliveryId: 'x-service-delivery-id',
} as const;

/** A delivery to send: a delivery object (serialised with `serializeDelivery`) or exact body bytes. */
export type DeliveryInput = Delivery<string, unknown> | BodyBytes;

/** Ways to bend a signed request for negative tests. */
export interface SignedRequestOptions {
  /**
   * Replace the signature header's value; `null` omits the header. Use `sign(body, otherSecret)` for
   * a wrong-secret test.
   */
  signature?: string | null;
  /** Extra or replacing headers (lower-case names). A value of `null` removes that header. */
  headers?: Record<string, string | null>;
}

/** Headers and body ready for any HTTP client: supertest, undici, `fetch`, `http.request`. */
export interface SignedPayload {
  /** Lower-case header names: content-type, the signature, event and delivery-id headers. */
  headers: Record<string, string>;
  /** The exact body; a string stands for its UTF-8 bytes. */
  body: string | Uint8Array;
}

/**
 * The headers and exact body of a signed delivery, for clients that take them separately. With
 * supertest: `request(app).post('/webhooks').set(headers).send(body)` (a string body with a JSON
 * content type is sent unchanged).
 *
 * @example
 * const { headers, body } = createSignedPayload(createDelivery('message.delivered'), secret);
 * await request(app).post('/webhooks').set(headers).send(body).expect(200);
 */
export function createSignedPayload(delivery: DeliveryInput, secret: string, options: SignedRequestOptions = {}): SignedPayload {
  const body = typeof delivery === 'string' || delivery instanceof Uint8Array ? delivery : serializeDelivery(delivery);
  const envelope = typeof delivery === 'string' || delivery instanceof Uint8Array ? peekEnvelope(body) : delivery;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const signature = options.signature === undefined ? sign(body, secret) : options.signature;
  if (signature !== null) headers[HEADER_NAMES.signature] = signature;
  if (envelope.event !== undefined) headers[HEADER_NAMES.event] = envelope.event;
  if (envelope.deliveryId !== undefined) headers[HEADER_NAMES.deliveryId] = envelope.deliveryId;
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[name.toLowerCase()];
    else headers[name.toLowerCase()] = value;
  }
  return { headers, body };
}

/**
 * A `Request` carrying a signed delivery exactly as the service sends it: POST, the exact bytes, the
 * lower-case hex signature and the `x-service-signature`, `x-service-event` and
 * `x-service-delivery-id` headers. Hand it to `receiver.fetch()` or any fetch-style app.
 *
 * @example
 * const response = await receiver.fetch(
 *   createSignedRequest('http://localhost/webhooks', createDelivery('call.completed'), secret),
 * );
 */
export function createSignedRequest(
  url: string | URL,
  delivery: DeliveryInput,
  secret: string,
  options: SignedRequestOptions = {},
): Request {
  const { headers, body } = createSignedPayload(delivery, secret, options);
  return new Request(url, { method: 'POST', headers, body: body as BodyInit });
}

/** Event and delivery id of raw bytes, for the unsigned headers; missing when the bytes are not an envelope. */
export function peekEnvelope(body: BodyBytes): { event?: string; deliveryId?: string } {
  try {
    const parsed: unknown = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
    if (typeof parsed !== 'object' || parsed === null) return {};
    const { event, deliveryId } = parsed as Record<string, unknown>;
    return {
      ...(typeof event === 'string' ? { event } : {}),
      ...(typeof deliveryId === 'string' ? { deliveryId } : {}),
    };
  } catch {
    return {};
  }
}
