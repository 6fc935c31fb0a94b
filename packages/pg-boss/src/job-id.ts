import { createHash } from 'node:crypto';

// pg-boss job ids are Postgres `uuid`s, and a deliveryId is an opaque string, so the id is a UUID
// version 5 (RFC 9562 §5.5: SHA-1 of a namespace and a name) of the deliveryId: the same deliveryId
// always gives the same id, which is what makes a second `send` of it a no-op.

/** hookline's UUID v5 namespace for deliveryIds (a fixed random UUID). */
export const DELIVERY_NAMESPACE = '3b0c6f2e-8d1a-4e57-9a43-6f1d2c7b5e90';

/** The UUID v5 of `name` in `namespace` (both as RFC 9562 specifies: namespace bytes, then UTF-8 name). */
export function uuidV5(name: string, namespace: string): string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (namespaceBytes.length !== 16) throw new TypeError(`uuidV5: ${JSON.stringify(namespace)} is not a UUID`);
  const hash = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50; // version 5
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80; // RFC variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The pg-boss job id of a delivery. */
export function jobIdFor(deliveryId: string): string {
  return uuidV5(deliveryId, DELIVERY_NAMESPACE);
}
