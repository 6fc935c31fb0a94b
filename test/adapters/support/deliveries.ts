// Signed deliveries as raw bytes: odd whitespace and key order, so any re-serialisation breaks them.
import { createHmac, randomBytes } from 'node:crypto';
import { MATRIX_SECRET, type TestControls } from './test-receiver';

/** A delivery ready to POST. */
export interface SignedDelivery {
  deliveryId: string;
  messageId: string;
  body: Buffer;
  headers: Record<string, string>;
}

const id = (prefix: string) => prefix + randomBytes(12).toString('hex');

/** The service's signature: lowercase hex HMAC-SHA256 of the exact bytes. */
export function signBytes(body: Uint8Array, secret = MATRIX_SECRET): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** A signed `message.delivered` (or `event`) delivery with the service's three headers. */
export function createSignedDelivery(options: { event?: string; controls?: TestControls; bom?: boolean } = {}): SignedDelivery {
  const { event = 'message.delivered', controls = {}, bom = false } = options;
  const deliveryId = id('wdl_');
  const messageId = id('msg_');
  const now = new Date().toISOString();
  const extra = Object.entries(controls)
    .map(([key, value]) => `,\n\t\t"${key}" :${JSON.stringify(value)}`)
    .join('');
  const text =
    `${bom ? '\uFEFF' : ''}{ "deliveryId":"${deliveryId}",\r\n  "data": {"to":"+12025550143","messageId" : "${messageId}",` +
    `"lineId":"lin_fixture", "from":"+12025550101",   "deliveredAt":"${now}"${extra}},\n` +
    `\t"event" :"${event}", "timestamp":"${now}" }\n`;
  const body = Buffer.from(text, 'utf8');
  return {
    deliveryId,
    messageId,
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signBytes(body),
      'x-service-event': event,
      'x-service-delivery-id': deliveryId,
    },
  };
}
