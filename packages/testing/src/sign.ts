import { createHmac } from 'node:crypto';

/** A request body as the service sends it: the exact bytes, or a string meaning its UTF-8 bytes. */
export type BodyBytes = string | Uint8Array;

/**
 * Signs a body the way the service does (docs/service-contract.md §2.3): the lowercase hex HMAC-SHA256 of
 * the exact bytes, keyed with the webhook's signingSecret. A string is signed as its UTF-8 bytes,
 * byte for byte: nothing is trimmed, re-serialised or normalised.
 *
 * @example
 * const signature = sign('{"event":"message.delivered"}', 'whsec_test');
 * // → 64 lowercase hex digits, the value of the x-service-signature header
 */
export function sign(body: BodyBytes, secret: string): string {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('sign: secret must be a non-empty string (the signingSecret the service returned)');
  }
  return createHmac('sha256', secret)
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');
}

/** The UTF-8 bytes of a body given as a string, or the bytes themselves. */
export function toBytes(body: BodyBytes): Uint8Array {
  return typeof body === 'string' ? new TextEncoder().encode(body) : body;
}
