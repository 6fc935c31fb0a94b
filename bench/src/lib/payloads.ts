import { createHmac, randomBytes } from 'node:crypto';

/** The three body sizes every suite uses: a small status event, a typical inbound message, a large one. */
export const PAYLOAD_SIZES = [
  { name: '≈300 B', bytes: 300, event: 'message.delivered' },
  { name: '1 KB', bytes: 1024, event: 'message.inbound' },
  { name: '16 KB', bytes: 16 * 1024, event: 'message.inbound' },
] as const;

/** The signing secret the benchmarks use. */
export const BENCH_SECRET = 'whsec_bench_3f9a2c71d04e4b8e9a6d';

const TEXT = 'Ça marche — see you at 6 🙂 Thanks for the update on the order, the parcel arrived this morning. ';

/** A fresh, unique `wdl_` id of fixed length (so every body of a pool has the same size). */
export function benchDeliveryId(n: number, salt = randomBytes(4).toString('hex')): string {
  return `wdl_${salt}${n.toString(36).padStart(14, '0')}`;
}

/**
 * A realistic delivery of about `bytes` bytes as the service would send it, with non-ASCII text and
 * a fresh timestamp. Split around the deliveryId so callers can stamp unique ids cheaply.
 */
export function deliveryTemplate(event: string, bytes: number): { before: string; after: string } {
  const timestamp = new Date().toISOString();
  const data: Record<string, unknown> =
    event === 'message.delivered'
      ? {
          messageId: 'msg_9d2f6h1j4k8l3z7x5c0v2b6n',
          from: '+12025550143',
          to: '+447700900123',
          lineId: 'lin_7f3k2m9q4x8w1z5c6v0b2n4h',
          deliveredAt: timestamp,
        }
      : {
          messageId: 'msg_4q8z1k7x2m9c3v6b0n5h8j1l',
          from: '+447700900123',
          to: '+12025550143',
          lineId: 'lin_7f3k2m9q4x8w1z5c6v0b2n4h',
          text: '',
          receivedAt: timestamp,
        };
  const marker = 'wdl_MARKER';
  const render = () => JSON.stringify({ event, timestamp, deliveryId: marker, data });
  const idLength = benchDeliveryId(0).length;
  const size = Buffer.byteLength(render()) - marker.length + idLength;
  if ('text' in data) {
    let text = '';
    while (size + Buffer.byteLength(text) < bytes) text += TEXT;
    // trim on a character boundary until the body fits
    while (text.length > 0 && size + Buffer.byteLength(text) > bytes) text = text.slice(0, -1);
    data.text = text;
  }
  const [before, after] = render().split(marker) as [string, string];
  return { before, after };
}

/** One delivery body ready to send, with the signatures each library expects. */
export interface SignedBody {
  deliveryId: string;
  text: string;
  bytes: Buffer;
  /** hookline: lower-case hex HMAC-SHA256 of the raw body. */
  hex: string;
}

/** The headers the service sends with `body` (of `event`): its signature, event and deliveryId. */
export function signedHeaders(body: SignedBody, event = 'message.inbound'): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-service-signature': body.hex,
    'x-service-event': event,
    'x-service-delivery-id': body.deliveryId,
  };
}

/** `count` bodies of one size with unique deliveryIds, each signed the service's way. */
export function signedPool(event: string, bytes: number, count: number, secret = BENCH_SECRET): SignedBody[] {
  const { before, after } = deliveryTemplate(event, bytes);
  const salt = randomBytes(4).toString('hex');
  const pool: SignedBody[] = [];
  for (let i = 0; i < count; i++) {
    const deliveryId = benchDeliveryId(i, salt);
    const text = before + deliveryId + after;
    const body = Buffer.from(text, 'utf8');
    pool.push({ deliveryId, text, bytes: body, hex: createHmac('sha256', secret).update(body).digest('hex') });
  }
  return pool;
}
