// webhookHandler invoked with the events each AWS source sends (fixtures/: the shapes AWS documents for
// API Gateway REST and HTTP APIs, Function URLs and ALB targets), through a real receiver.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createReceiver } from '@hookline/core';
import { describe, expect, it } from 'vitest';
import { webhookHandler, type LambdaHttpEvent } from './webhook-handler';

const SECRET = 'whsec_lambda_test';
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), 'utf8'));

type Shape = 'v1' | 'v2' | 'alb' | 'alb-multi';

/** Puts a request's method, headers and body into a copy of the source's recorded event. */
// biome-ignore lint/suspicious/noExplicitAny: the fixtures are JSON, edited field by field per shape
type Json = any;

function eventOf(shape: Shape, template: Record<string, unknown>, request: Request0): LambdaHttpEvent {
  const event = structuredClone(template) as Json;
  const body = request.base64 ? Buffer.from(request.body).toString('base64') : Buffer.from(request.body).toString('utf8');
  event.body = body;
  event.isBase64Encoded = request.base64;
  if (shape === 'v2') {
    event.requestContext.http.method = request.method;
    event.headers = { ...event.headers, ...request.headers, 'content-length': String(request.body.length) };
  } else if (shape === 'alb-multi') {
    event.httpMethod = request.method;
    for (const [name, value] of Object.entries(request.headers)) event.multiValueHeaders[name] = [value];
  } else {
    event.httpMethod = request.method;
    // REST APIs keep the sender's header case; both maps carry every header.
    const cased = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase()), value]),
    );
    event.headers = { ...event.headers, ...(shape === 'v1' ? cased : request.headers) };
    if (shape === 'v1') {
      event.requestContext.httpMethod = request.method;
      for (const [name, value] of Object.entries(cased)) event.multiValueHeaders[name] = [value];
    }
  }
  return event as LambdaHttpEvent;
}

interface Request0 {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array;
  base64: boolean;
}

function signed(options: { note?: string; base64?: boolean; bom?: boolean; pad?: number } = {}) {
  const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
  const now = new Date().toISOString();
  const note = options.note ?? 'plain';
  const text =
    `${options.bom ? '\uFEFF' : ''}{"deliveryId":"${deliveryId}","event":"message.delivered","timestamp":"${now}",` +
    `"data":{"messageId":"msg_lambda","from":"+12025550101","to":"+12025550143","lineId":"lin_1","deliveredAt":"${now}","note":${JSON.stringify(note)}` +
    `${options.pad ? `,"pad":"${'x'.repeat(options.pad)}"` : ''}}}`;
  const body = new Uint8Array(Buffer.from(text, 'utf8'));
  const headers = {
    'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
    'x-service-event': 'message.delivered',
    'x-service-delivery-id': deliveryId,
  };
  return { deliveryId, request: { method: 'POST', headers, body, base64: options.base64 ?? false } satisfies Request0 };
}

function setUp() {
  const runs: { deliveryId: string; note: unknown }[] = [];
  const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 4 * 1024, logger: false });
  receiver.on('message.delivered', ({ deliveryId, data }) => {
    runs.push({ deliveryId, note: (data as { note?: unknown }).note });
  });
  return { runs, handler: webhookHandler(receiver) };
}

/** The answer's headers, whichever map the shape uses (lower-case names). */
function headersOf(result: Json): Record<string, string> {
  if (result.multiValueHeaders)
    return Object.fromEntries(Object.entries(result.multiValueHeaders as Record<string, string[]>).map(([n, v]) => [n, v.join(', ')]));
  return result.headers ?? {};
}

const SOURCES: [string, Shape, string][] = [
  ['API Gateway REST API (payload 1.0)', 'v1', 'api-gateway-rest'],
  ['API Gateway HTTP API (payload 2.0)', 'v2', 'api-gateway-http'],
  ['Lambda Function URL', 'v2', 'function-url'],
  ['ALB target group', 'alb', 'alb'],
  ['ALB target group with multi-value headers', 'alb-multi', 'alb-multi-value'],
];

describe.each(SOURCES)('webhookHandler: %s', (_name, shape, file) => {
  const template = fixture(file);
  const invoke = (handler: ReturnType<typeof webhookHandler>, request: Request0) =>
    handler(eventOf(shape, template, request)) as Promise<Json>;

  it('handles a signed delivery once and answers its repeat as a duplicate, in the event source’s shape', async () => {
    const { runs, handler } = setUp();
    const { deliveryId, request } = signed();
    const first = await invoke(handler, request);
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ ok: true });
    expect(first.isBase64Encoded).toBe(false);
    expect(headersOf(first)['content-type']).toBe('application/json');
    // Multi-value headers in the answer exactly when the event came with them (ALB refuses a mix).
    const multi = shape === 'v1' || shape === 'alb-multi';
    expect(first.multiValueHeaders !== undefined).toBe(multi);
    expect(first.headers !== undefined).toBe(!multi);
    if (shape === 'alb' || shape === 'alb-multi') expect(first.statusDescription).toBe('200 OK');
    else expect(first.statusDescription).toBeUndefined();

    const again = await invoke(handler, request);
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
    expect(runs).toEqual([{ deliveryId, note: 'plain' }]);
  });

  it('refuses a tampered body with 401', async () => {
    const { runs, handler } = setUp();
    const { request } = signed();
    const body = request.body.slice();
    body[body.length - 3] = body[body.length - 3]! ^ 1;
    const answer = await invoke(handler, { ...request, body });
    expect(answer.statusCode).toBe(401);
    expect(JSON.parse(answer.body).error.code).toBe('INVALID_SIGNATURE');
    expect(runs).toEqual([]);
  });

  it('decodes a base64 body with non-ASCII bytes (a BOM, umlauts, an emoji) to the exact signed bytes', async () => {
    const { runs, handler } = setUp();
    const { deliveryId, request } = signed({ note: 'Grüße 🎉 — ok', base64: true, bom: true });
    const answer = await invoke(handler, request);
    expect(answer.statusCode).toBe(200);
    expect(runs).toEqual([{ deliveryId, note: 'Grüße 🎉 — ok' }]);
  });

  it('takes a text body with non-ASCII characters as its UTF-8 bytes', async () => {
    const { runs, handler } = setUp();
    const { deliveryId, request } = signed({ note: 'naïve café ✓' });
    const answer = await invoke(handler, request);
    expect(answer.statusCode).toBe(200);
    expect(runs).toEqual([{ deliveryId, note: 'naïve café ✓' }]);
  });

  it('answers 413 to a body over maxBodyBytes, base64-encoded or not', async () => {
    const { runs, handler } = setUp();
    for (const base64 of [false, true]) {
      for (const pad of [4 * 1024, 64 * 1024]) {
        const { request } = signed({ base64, pad });
        const answer = await invoke(handler, request);
        expect(answer.statusCode).toBe(413);
        expect(JSON.parse(answer.body).error.code).toBe('PAYLOAD_TOO_LARGE');
        // The connection is the load balancer's or API Gateway's: no `connection: close` from the function.
        expect(headersOf(answer).connection).toBeUndefined();
      }
    }
    expect(runs).toEqual([]);
  });

  it('answers 405 with Allow: POST to anything but POST', async () => {
    const { runs, handler } = setUp();
    for (const method of ['GET', 'PUT', 'HEAD']) {
      const { request } = signed();
      const answer = await invoke(handler, { ...request, method, body: new Uint8Array(0) });
      expect(answer.statusCode).toBe(405);
      expect(headersOf(answer).allow).toBe('POST');
      if (shape === 'alb' || shape === 'alb-multi') expect(answer.statusDescription).toBe('405 Method Not Allowed');
    }
    expect(runs).toEqual([]);
  });
});

describe('webhookHandler: an invocation that is no HTTP request', () => {
  const events: [string, unknown, RegExp][] = [
    ['a warmer', { source: 'serverless-plugin-warmup' }, /an event from serverless-plugin-warmup \(a warmer\?\)/],
    [
      'an EventBridge schedule',
      { version: '0', id: 'x', 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-01-01T00:00:00Z', detail: {} },
      /an EventBridge event \(Scheduled Event/,
    ],
    ['a console test event', { key1: 'value1', key2: 'value2' }, /a warmer, a schedule or a console test\?/],
    ['an SQS event', { Records: [{ eventSource: 'aws:sqs' }] }, /consumed by sqsHandler from @hookline\/sqs/],
    ['nothing at all', null, /no HTTP request/],
  ];

  it.each(events)('answers %s with a clear 400 in the service’s error shape, not a TypeError', async (_name, event, says) => {
    const { handler, runs } = setUp();
    const result = (await handler(event as LambdaHttpEvent)) as Json;
    expect(result.statusCode).toBe(400);
    const { error } = JSON.parse(result.body);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'event', issue: 'not_an_http_event' } });
    expect(error.message).toMatch(says);
    expect(runs).toEqual([]);
  });
});

describe('webhookHandler: the request URL a tenant resolver sees', () => {
  it('is rebuilt from the host, path and query of each event shape', async () => {
    const urls: string[] = [];
    const receiver = createReceiver({
      secret: (request) => {
        urls.push(request.url ?? '');
        return SECRET;
      },
    });
    receiver.on('message.delivered', () => {});
    const handler = webhookHandler(receiver);
    for (const [, shape, file] of SOURCES) await handler(eventOf(shape, fixture(file), signed().request));
    expect(urls).toEqual([
      'https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/webhooks',
      'https://r3pmxmplak.execute-api.us-east-2.amazonaws.com/webhooks?tenant=acme',
      'https://abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-west-2.on.aws/webhooks',
      'https://lambda-alb-123578498.us-east-1.elb.amazonaws.com/webhooks',
      'https://lambda-alb-123578498.us-east-1.elb.amazonaws.com/webhooks?tenant=acme',
    ]);
  });
});
