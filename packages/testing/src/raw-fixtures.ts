/** The secret every raw fixture's `signature` was made with. */
export const FIXTURE_SECRET = 'whsec_hookline_fixture_0123456789';

/** A delivery body kept as exact bytes, with the signature the service would send for it. */
export interface RawFixture {
  /** Short identifier, e.g. `'pretty-printed-crlf'`. */
  name: string;
  /** What is unusual about these bytes, and what a re-serialising receiver would break. */
  description: string;
  /** Event name inside the body (also sent as `x-service-event`). */
  event: string;
  /** Delivery id inside the body (also sent as `x-service-delivery-id`). */
  deliveryId: string;
  /** The exact body; its UTF-8 bytes are what was signed. */
  body: string;
  /** Lowercase hex HMAC-SHA256 of `body` keyed with `FIXTURE_SECRET`, computed independently (openssl). */
  signature: string;
}

/**
 * Raw-bytes fixtures for signature tests: non-ASCII text, odd whitespace, unusual key order, escapes
 * and number spellings that `JSON.stringify(JSON.parse(body))` would change. A receiver that verifies
 * anything but the exact received bytes fails on every one of them.
 *
 * Their timestamps are fixed in 2025, so a receiver with a freshness window answers 400 (stale) after
 * verifying the signature: a 401 means the bytes were altered, a 400 that they verified.
 *
 * @example
 * for (const fixture of RAW_FIXTURES) {
 *   expect(sign(fixture.body, FIXTURE_SECRET)).toBe(fixture.signature);
 * }
 */
export const RAW_FIXTURES: readonly RawFixture[] = [
  {
    name: 'non-ascii-compact',
    description: 'compact JSON with accents, CJK, Arabic and an emoji as literal UTF-8 characters',
    event: 'message.inbound',
    deliveryId: 'wdl_raw01nonascii0000000000',
    body: '{"event":"message.inbound","timestamp":"2025-03-14T09:26:53.589Z","deliveryId":"wdl_raw01nonascii0000000000","data":{"messageId":"msg_raw01","from":"+447700900123","to":"+12025550143","lineId":"lin_raw01","text":"Grüße aus Zürich — 東京 🚀 مرحبا"}}',
    signature: '84dfc9eef3feb23a1d46ccb4506d9cbe35381c74c7d436f3b21f433757978685',
  },
  {
    name: 'pretty-printed-crlf',
    description: 'pretty-printed with tabs, CRLF line ends and a space before each colon',
    event: 'message.delivered',
    deliveryId: 'wdl_raw02crlf00000000000000',
    body: '{\r\n\t"event" : "message.delivered",\r\n\t"timestamp" : "2025-03-14T09:26:53.589Z",\r\n\t"deliveryId" : "wdl_raw02crlf00000000000000",\r\n\t"data" : {\r\n\t\t"messageId" : "msg_raw02",\r\n\t\t"from" : "+12025550143",\r\n\t\t"to" : "+447700900123",\r\n\t\t"lineId" : "lin_raw02",\r\n\t\t"deliveredAt" : "2025-03-14T09:26:53.402Z"\r\n\t}\r\n}',
    signature: 'ab8dd1ca58cccca03fafb003baf92e2ad6d23e7559ed8b23e7fe5b41831740cc',
  },
  {
    name: 'data-first-key-order',
    description: 'keys in an unusual order (data first, event last) with nested keys unsorted',
    event: 'call.completed',
    deliveryId: 'wdl_raw03keyorder000000000',
    body: '{"data":{"to":"+447700900123","durationSeconds":184,"callId":"call_raw03","from":"+12025550143","lineId":"lin_raw03"},"deliveryId":"wdl_raw03keyorder000000000","timestamp":"2025-03-14T09:26:53.589Z","event":"call.completed"}',
    signature: '18426cb1d30094e7fee6355757d2f812efb7482846372282be098810352d20fc',
  },
  {
    name: 'escapes-and-numbers',
    description: 'escaped unicode (\\u00e9), an escaped slash and numbers spelt 1.50 and 1e3, all of which re-serialising rewrites',
    event: 'message.failed',
    deliveryId: 'wdl_raw04escapes0000000000',
    body: '{"event":"message.failed","timestamp":"2025-03-14T09:26:53.589Z","deliveryId":"wdl_raw04escapes0000000000","data":{"messageId":"msg_raw04","reason":"r\\u00e9seau indisponible","url":"https:\\/\\/example.com\\/x","cost":1.50,"retryAfterMs":1e3}}',
    signature: 'aec3502635143d93f596f0ae1368001ef3d1091c4b36dfaf44f68984374db3b3',
  },
  {
    name: 'trailing-newline',
    description: 'ends with a newline, which a receiver that trims the body drops',
    event: 'message.sent',
    deliveryId: 'wdl_raw05newline000000000',
    body: '{"event":"message.sent","timestamp":"2025-03-14T09:26:53.589Z","deliveryId":"wdl_raw05newline000000000","data":{"messageId":"msg_raw05","to":"+447700900123","text":"  leading and trailing spaces  "}}\n',
    signature: 'd54f40436eed9b97fa988d02a65ac9d08fc88809ea9592b78da5a4fa6524c5ca',
  },
];
