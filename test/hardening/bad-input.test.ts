// Hostile and broken input, each with the exact answer (status, error.code, details). Body-level
// cases go through receiver.handle; transport-level ones (chunked, lying Content-Length, duplicate
// headers, slow senders) through the node:http bridge over raw TCP sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '@hookline/testing';
import { deliveryBody, errorOf, nodeServer, rawRequest, recordingReceiver, SECRET, serviceHeaders } from './support';

const LIMIT = 4096;
const { receiver, seen } = recordingReceiver({ maxBodyBytes: LIMIT });

async function answerFor(body: string | Uint8Array, headers: Record<string, string | string[]> = serviceHeaders(body)) {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const before = seen.length;
  const answer = await receiver.handle({ body: bytes, headers });
  const ran = seen.length - before;
  return { status: answer.status, error: answer.status >= 400 ? errorOf(answer.body) : undefined, ran, answer };
}

/** A delivery body of exactly `size` bytes (padding in data.text). */
function bodyOfSize(size: number): string {
  const base = deliveryBody({ text: '' });
  const body = base.replace('"text":""', `"text":"${'é'.repeat(Math.floor((size - Buffer.byteLength(base)) / 2))}"`);
  const missing = size - Buffer.byteLength(body);
  return missing === 0 ? body : body.replace('"text":"', `"text":"${'x'.repeat(missing)}`);
}

describe('bodies (receiver.handle)', () => {
  it('empty body: 400 VALIDATION_ERROR body/invalid_json, nothing runs', async () => {
    const r = await answerFor('');
    expect([r.status, r.error?.code, r.error?.details, r.ran]).toEqual([
      400,
      'VALIDATION_ERROR',
      { field: 'body', issue: 'invalid_json' },
      0,
    ]);
  });

  it('empty body without a signature: 401 INVALID_SIGNATURE missing', async () => {
    const r = await answerFor('', {});
    expect([r.status, r.error?.code, r.error?.details]).toEqual([
      401,
      'INVALID_SIGNATURE',
      { field: 'x-service-signature', issue: 'missing' },
    ]);
  });

  it.each(['{"event":', 'not json', '{"a":1}}', '\u0000'])('non-JSON %j: 400 body/invalid_json', async (text) => {
    const r = await answerFor(text);
    expect([r.status, r.error?.code, r.error?.details, r.ran]).toEqual([
      400,
      'VALIDATION_ERROR',
      { field: 'body', issue: 'invalid_json' },
      0,
    ]);
  });

  it('invalid UTF-8: 400 body/not_utf8', async () => {
    const r = await answerFor(Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect([r.status, r.error?.details]).toEqual([400, { field: 'body', issue: 'not_utf8' }]);
  });

  it.each(['[]', '"delivery"', '42', 'null', 'true', '[{"event":"message.inbound"}]'])(
    'JSON that is not an object %s: 400 body/not_an_object',
    async (text) => {
      const r = await answerFor(text);
      expect([r.status, r.error?.code, r.error?.details, r.ran]).toEqual([
        400,
        'VALIDATION_ERROR',
        { field: 'body', issue: 'not_an_object' },
        0,
      ]);
    },
  );

  it('100,000 nested arrays inside data: no stack overflow, delivered as is (200)', async () => {
    const depth = 100_000;
    const body = deliveryBody({ deep: 'DEEP' }).replace('"DEEP"', `${'['.repeat(depth)}${']'.repeat(depth)}`);
    const big = recordingReceiver();
    const answer = await big.receiver.handle({ body: new TextEncoder().encode(body), headers: serviceHeaders(body) });
    expect([answer.status, big.seen.length]).toEqual([200, 1]);
    let node = (big.seen[0]?.data as { deep: unknown } | undefined)?.deep;
    let levels = 0;
    while (Array.isArray(node) && node.length > 0) {
      node = node[0];
      levels++;
    }
    expect(levels + 1).toBe(depth);
  });

  it('100,000 nested arrays as the whole body: 400 body/not_an_object', async () => {
    const body = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const answer = await recordingReceiver().receiver.handle({ body: new TextEncoder().encode(body), headers: serviceHeaders(body) });
    expect([answer.status, errorOf(answer.body).details]).toEqual([400, { field: 'body', issue: 'not_an_object' }]);
  });

  it('a huge string within the limit is delivered; past it, 413 before verification', async () => {
    const big = recordingReceiver({ maxBodyBytes: 8 * 1024 * 1024 });
    const text = 'ü'.repeat(3 * 1024 * 1024); // 6 MiB of two-byte characters
    const body = deliveryBody({ text });
    const ok = await big.receiver.handle({ body: new TextEncoder().encode(body), headers: serviceHeaders(body) });
    expect(ok.status).toBe(200);
    expect((big.seen[0]?.data as { text: string } | undefined)?.text).toBe(text);
    const over = deliveryBody({ text: `${text}${text}` });
    const refused = await big.receiver.handle({ body: new TextEncoder().encode(over), headers: serviceHeaders(over) });
    expect([refused.status, errorOf(refused.body).code, errorOf(refused.body).details]).toEqual([
      413,
      'PAYLOAD_TOO_LARGE',
      { limit: 8 * 1024 * 1024 },
    ]);
  });

  it.each([
    ['just under', LIMIT - 1, 200],
    ['exactly at', LIMIT, 200],
    ['just over', LIMIT + 1, 413],
  ] as const)('a body %s the limit (%i bytes): %i', async (_, size, status) => {
    const body = bodyOfSize(size);
    expect(Buffer.byteLength(body)).toBe(size);
    const r = await answerFor(body);
    expect(r.status).toBe(status);
    if (status === 413)
      expect([r.error?.code, r.error?.details, r.answer.headers.connection]).toEqual(['PAYLOAD_TOO_LARGE', { limit: LIMIT }, 'close']);
  });
});

describe('headers (receiver.handle)', () => {
  it('duplicate signature headers (node gives an array): 401 malformed even when one is right', async () => {
    const body = deliveryBody({});
    const good = sign(body, SECRET);
    for (const values of [
      [good, good],
      [good, '0'.repeat(64)],
      ['0'.repeat(64), good],
    ]) {
      const r = await answerFor(body, { 'x-service-signature': values });
      expect([r.status, r.error?.code, r.error?.details, r.ran]).toEqual([
        401,
        'INVALID_SIGNATURE',
        { field: 'x-service-signature', issue: 'malformed' },
        0,
      ]);
    }
  });

  it('a signature with spaces handed over untrimmed: 401 malformed (HTTP servers trim them first: see below)', async () => {
    const body = deliveryBody({});
    for (const value of [` ${sign(body, SECRET)}`, `${sign(body, SECRET)} `, sign(body, SECRET).replace(/^(.{32})/, '$1 ')]) {
      const r = await answerFor(body, { 'x-service-signature': value });
      expect([r.status, r.error?.details]).toEqual([401, { field: 'x-service-signature', issue: 'malformed' }]);
    }
  });

  it('upper-case hex: 401 malformed (the service sends lower-case)', async () => {
    const body = deliveryBody({});
    const r = await answerFor(body, { 'x-service-signature': sign(body, SECRET).toUpperCase() });
    expect([r.status, r.error?.details]).toEqual([401, { field: 'x-service-signature', issue: 'malformed' }]);
  });

  it('an event header with a trailing space disagrees with the body: 400', async () => {
    const body = deliveryBody({}, 'message.inbound');
    const r = await answerFor(body, { ...serviceHeaders(body), 'x-service-event': 'message.inbound ' });
    expect([r.status, r.error?.details]).toEqual([400, { field: 'x-service-event', issue: 'does_not_match_body' }]);
  });
});

describe('transport (node:http bridge, raw TCP)', () => {
  let server: Awaited<ReturnType<typeof nodeServer>>;
  // Short limits so the slow-sender cases end quickly; node checks them every connectionsCheckingInterval.
  beforeAll(async () => {
    server = await nodeServer(receiver, { requestTimeout: 1_000, headersTimeout: 500, connectionsCheckingInterval: 100 });
  });
  afterAll(() => server.close());

  const head = (headers: Record<string, string>) =>
    `POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;

  it('a chunked body with no Content-Length over the limit: 413 and the connection is closed', async () => {
    const body = bodyOfSize(LIMIT * 3);
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const before = seen.length;
    const r = await rawRequest(
      server.port,
      [
        head({ ...serviceHeaders(body), 'transfer-encoding': 'chunked' }),
        chunk(body.slice(0, LIMIT)),
        chunk(body.slice(LIMIT, LIMIT * 2)),
        chunk(body.slice(LIMIT * 2)),
        '0\r\n\r\n',
      ],
      { gapMs: 20 },
    );
    expect(r.statuses[0]).toBe(413);
    expect(r.text).toContain('"code":"PAYLOAD_TOO_LARGE"');
    expect(r.text.toLowerCase()).toContain('connection: close');
    expect(r.closedByServer).toBe(true);
    expect(seen.length).toBe(before);
  });

  it('a chunked body within the limit is delivered (200)', async () => {
    const body = deliveryBody({ via: 'chunked' });
    const half = Math.floor(body.length / 2);
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const r = await rawRequest(
      server.port,
      [head({ ...serviceHeaders(body), 'transfer-encoding': 'chunked' }), chunk(body.slice(0, half)), chunk(body.slice(half)), '0\r\n\r\n'],
      { idleMs: 500 },
    );
    expect(r.statuses).toEqual([200]);
  });

  it('Content-Length declaring more than the limit: 413 before a byte of the body is read', async () => {
    const r = await rawRequest(server.port, [head({ ...serviceHeaders('{}'), 'content-length': String(LIMIT + 1) })]);
    expect(r.statuses[0]).toBe(413);
    expect(r.closedByServer).toBe(true);
  });

  it('Content-Length larger than the bytes sent: never answered 2xx, the connection is closed by requestTimeout', async () => {
    const body = deliveryBody({});
    const before = seen.length;
    const r = await rawRequest(
      server.port,
      [head({ ...serviceHeaders(body), 'content-length': String(Buffer.byteLength(body) + 100) }), body],
      { idleMs: 10_000 },
    );
    expect(r.closedByServer).toBe(true);
    expect(r.statuses.every((s) => s >= 400)).toBe(true); // node answers 408, or just closes
    expect(seen.length).toBe(before);
  });

  it('Content-Length smaller than the bytes sent: no 2xx, nothing runs, the connection is closed', async () => {
    // The truncated body fails verification (401 mismatch); the leftover bytes are a malformed next
    // request that node's parser answers 400 and closes on, whichever is written first.
    const body = deliveryBody({});
    const before = seen.length;
    const r = await rawRequest(server.port, [
      head({ ...serviceHeaders(body), 'content-length': String(Buffer.byteLength(body) - 10) }),
      body,
    ]);
    expect(r.statuses.length).toBeGreaterThan(0);
    expect(r.statuses.every((s) => s === 400 || s === 401)).toBe(true);
    expect(r.closedByServer).toBe(true);
    expect(seen.length).toBe(before);
  });

  it('two x-service-signature headers: node joins them, 401 malformed', async () => {
    const body = deliveryBody({});
    const signature = sign(body, SECRET);
    const request = `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Service-Signature: ${signature}\r\nX-Service-Signature: ${signature}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    const r = await rawRequest(server.port, [request]);
    expect(r.statuses).toEqual([401]);
    expect(r.text).toContain('"issue":"malformed"');
  });

  it('header values with spaces around them are trimmed by HTTP (RFC 9110 §5.5): 200', async () => {
    const body = deliveryBody({});
    const parsed = JSON.parse(body) as { event: string; deliveryId: string };
    const request = `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-Service-Signature:    ${sign(body, SECRET)}   \r\nX-Service-Event:  ${parsed.event} \r\nX-Service-Delivery-Id: \t${parsed.deliveryId}\t\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    const r = await rawRequest(server.port, [request]);
    expect(r.statuses).toEqual([200]);
  });

  it('slow-loris headers (a byte at a time, never finished): the server closes the connection (headersTimeout)', async () => {
    const parts = 'POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '.split('').concat(Array.from({ length: 200 }, () => 'a'));
    const r = await rawRequest(server.port, parts, { gapMs: 25, idleMs: 10_000 });
    expect(r.closedByServer).toBe(true);
    expect(r.statuses.every((s) => s >= 400)).toBe(true);
  });

  it('slow-loris body (headers done, body trickling): the server closes the connection (requestTimeout), nothing runs', async () => {
    const body = deliveryBody({});
    const before = seen.length;
    const r = await rawRequest(
      server.port,
      [head({ ...serviceHeaders(body), 'content-length': String(Buffer.byteLength(body)) }), ...body.split('')],
      { gapMs: 25, idleMs: 10_000 },
    );
    expect(r.closedByServer).toBe(true);
    expect(r.statuses.every((s) => s >= 400)).toBe(true);
    expect(seen.length).toBe(before);
  });
});
