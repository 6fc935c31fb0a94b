import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A fresh identifier with the service's prefix (`wdl_`, `msg_`, `lin_`, …) and 24 random base-36
 * characters. The service documents only the prefixes; the rest is our choice.
 *
 * @example
 * createId('wdl_'); // 'wdl_3k9x0q…'
 */
export function createId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let out = prefix;
  // 252 is the largest multiple of 36 under 256: rejecting bytes above it keeps every character equally likely.
  for (let i = 0; out.length < prefix.length + length; i++) {
    if (i === bytes.length) return out + createId('', prefix.length + length - out.length);
    const byte = bytes[i]!;
    if (byte < 252) out += ALPHABET[byte % 36];
  }
  return out;
}

/** A random E.164 number in the US 555-01xx range reserved for fiction, e.g. `+12025550143`. */
export function createPhoneNumber(): string {
  const suffix = String(randomBytes(1)[0]! % 100).padStart(2, '0');
  return `+120255501${suffix}`;
}
