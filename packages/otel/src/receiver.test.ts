// End to end: a real receiver behind a real node:http server on 127.0.0.1, each request inside an HTTP
// server span (what @opentelemetry/instrumentation-http makes), the instrumentation wired to the SDK's
// in-memory span exporter and a metric reader. Each scenario asserts the exact delivery span and the
// exact metric points it produces.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, createReceiver, type DeliveryQueue, PermanentFailure, type QueuedDelivery } from '@hookline/core';
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Point, setUpTelemetry, type Telemetry, tearDownContext } from './test-support';

const SECRET = 'whsec_otel_e2e_secret';
const MAX_BODY = 8192;
/** How long to wait for spans that end after the answer: generous, for a loaded machine. */
const WAIT = { timeout: 10_000, interval: 20 };
// A marker only the bodies contain: no attribute may ever carry it.
const BODY_MARKER = 'bödy-sécret-ünïque-7f3a';

function delivery(event: string, deliveryId = `wdl_${randomBytes(10).toString('hex')}`) {
  const now = new Date().toISOString();
  const body = Buffer.from(
    `{"event":"${event}","deliveryId":"${deliveryId}","timestamp":"${now}","data":{"messageId":"msg_otel","note":"${BODY_MARKER}"}}`,
  );
  const signature = createHmac('sha256', SECRET).update(body).digest('hex');
  return { deliveryId, body, signature, headers: { 'content-type': 'application/json', 'x-service-signature': signature } };
}

/** A queue kept in memory: jobs run in the worker's own loop, outside the request that enqueued them. */
function memoryQueue(): DeliveryQueue & { drained(): Promise<void> } {
  const jobs: QueuedDelivery[] = [];
  let wake: (() => void) | undefined;
  let idle: (() => void) | undefined;
  return {
    name: 'memory',
    async enqueue(job) {
      jobs.push(structuredClone(job));
      wake?.();
      return { duplicate: false };
    },
    work(process) {
      let open = true;
      const loop = (async () => {
        while (open) {
          const job = jobs.shift();
          if (job === undefined) {
            idle?.();
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            continue;
          }
          await process({ payload: job, attempt: 1, maxAttempts: 3 });
        }
      })();
      return {
        close: async () => {
          open = false;
          wake?.();
          await loop;
        },
      };
    },
    drained: () =>
      new Promise<void>((resolve) => {
        if (jobs.length === 0) setImmediate(resolve);
        else idle = resolve;
      }),
    deadLetters: async () => [],
    replay: async () => false,
    replayAll: async () => 0,
    close: async () => {},
  };
}

interface Harness {
  server: Server;
  url: string;
}

/** node:http on 127.0.0.1: every request runs inside a SERVER span, ended when the response finished. */
async function serve(telemetry: Telemetry, handler: ReturnType<typeof createNodeHandler>): Promise<Harness> {
  const tracer = telemetry.tracerProvider.getTracer('test-http');
  const server = createServer((req, res) => {
    const span = tracer.startSpan(`${req.method} /webhooks`, { kind: SpanKind.SERVER });
    res.on('finish', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      span.end();
    });
    context.with(trace.setSpan(context.active(), span), () => void handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks` };
}

const BASE = {
  'messaging.system': 'hookline',
  'messaging.operation.type': 'process',
  'messaging.operation.name': 'process',
};

describe('HooklineInstrumentation with a real receiver over HTTP', () => {
  let telemetry: Telemetry;
  let harness: Harness;
  let queueHarness: Harness;
  const queue = memoryQueue();
  let worker: { close(): Promise<void> };
  const seenSpans: ReadableSpan[] = [];
  const seenPoints: Point[] = [];
  /** What a handler saw as the active span, by deliveryId. */
  const handlerParents = new Map<string, string | undefined>();
  let childSpans: Span[] = [];
  // A handler that waits until the test lets it finish.
  let slowStarted: (() => void) | undefined;
  let slowGate: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    telemetry = setUpTelemetry();
    const tracer = telemetry.tracerProvider.getTracer('test-handler');
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: MAX_BODY, logger: false })
      .on('message.delivered', async (d) => {
        handlerParents.set(d.deliveryId, trace.getActiveSpan()?.spanContext().spanId);
        await new Promise((resolve) => setImmediate(resolve));
        // Started after an await: the delivery span must still be the active one.
        childSpans.push(tracer.startSpan('write to the database'));
        childSpans.at(-1)?.end();
      })
      .on('message.failed', () => {
        throw new PermanentFailure('unknown message');
      })
      .on('call.failed', async () => {
        throw new TypeError('the database is read-only');
      })
      .on('line.status_changed', async () => {
        slowStarted?.();
        await slowGate;
      })
      // An ordering guard: its version record is read and advanced through the store.
      .on('message.edited', () => {}, { name: 'edits-in-order', order: { key: (d) => d.deliveryId } });
    receiver.onError(() => {}); // the thrown handler is expected: keep the output quiet
    harness = await serve(telemetry, createNodeHandler(receiver, { path: '/webhooks' }));

    const queued = createReceiver({ secret: SECRET, queue }).on('message.read', async () => {
      childSpans.push(tracer.startSpan('worker work'));
      childSpans.at(-1)?.end();
    });
    worker = context.with(trace.deleteSpan(context.active()), () => queued.work());
    queueHarness = await serve(telemetry, createNodeHandler(queued, { path: '/webhooks' }));
  });

  afterAll(async () => {
    await worker?.close();
    await new Promise((resolve) => harness?.server.close(resolve));
    await new Promise((resolve) => queueHarness?.server.close(resolve));
    await telemetry?.shutdown();
    tearDownContext();
  });

  beforeEach(async () => {
    telemetry.takeSpans();
    await telemetry.takePoints();
    childSpans = [];
  });

  async function post(url: string, body: Uint8Array, headers: Record<string, string>): Promise<number> {
    const response = await fetch(url, { method: 'POST', body: new Uint8Array(body), headers });
    await response.arrayBuffer();
    return response.status;
  }

  /** The spans of one request: waits for the server span (it ends on 'finish'), returns [delivery, server]. */
  async function spansOfRequest(): Promise<{ delivery: ReadableSpan; server: ReadableSpan; all: ReadableSpan[] }> {
    const all: ReadableSpan[] = [];
    await vi.waitFor(() => {
      all.push(...telemetry.takeSpans());
      expect(all.some((span) => span.kind === SpanKind.SERVER)).toBe(true);
    }, WAIT);
    seenSpans.push(...all);
    const deliveries = all.filter((span) => span.instrumentationScope.name === '@hookline/otel');
    expect(deliveries).toHaveLength(1);
    return { delivery: deliveries[0]!, server: all.find((span) => span.kind === SpanKind.SERVER)!, all };
  }

  async function points(): Promise<Point[]> {
    const taken = await telemetry.takePoints();
    seenPoints.push(...taken);
    return taken;
  }

  const count = (name: string, attributes: Record<string, unknown>, value = 1) =>
    expect.objectContaining({ name, attributes, value }) as unknown as Point;
  const histogram = (name: string, attributes: Record<string, unknown>, n = 1) =>
    expect.objectContaining({ name, attributes, count: n, unit: 's' }) as unknown as Point;
  const inflightZero = count('hookline.inflight', {}, 0);

  it('handled: a CONSUMER span `process <event>`, child of the HTTP server span, parent of the handler spans', async () => {
    const d = delivery('message.delivered');
    expect(await post(harness.url, d.body, d.headers)).toBe(200);
    const { delivery: span, server } = await spansOfRequest();
    expect(span.name).toBe('process message.delivered');
    expect(span.kind).toBe(SpanKind.CONSUMER);
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'handled',
      'hookline.event': 'message.delivered',
      'messaging.message.id': d.deliveryId,
      'hookline.claims': 1,
      'http.response.status_code': 200,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(span.spanContext().traceId).toBe(server.spanContext().traceId);
    // The handler ran with the delivery span active, and a span it started is its child.
    expect(handlerParents.get(d.deliveryId)).toBe(span.spanContext().spanId);
    expect(childSpans).toHaveLength(1);
    const child = seenSpans.find((candidate) => candidate.name === 'write to the database');
    expect(child?.parentSpanContext?.spanId).toBe(span.spanContext().spanId);

    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'handled', 'hookline.event': 'message.delivered' }),
      histogram('hookline.delivery.delay', {}),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'handled' }),
      inflightZero,
      histogram('hookline.store.duration', { 'hookline.store.operation': 'claim' }),
      histogram('hookline.store.duration', { 'hookline.store.operation': 'complete' }),
    ]);
  });

  it('duplicate: the repeat is its own span with outcome duplicate and no handler run', async () => {
    const d = delivery('message.delivered');
    expect(await post(harness.url, d.body, d.headers)).toBe(200);
    await spansOfRequest();
    await points();
    childSpans = [];
    expect(await post(harness.url, d.body, d.headers)).toBe(200);
    const { delivery: span } = await spansOfRequest();
    expect(span.name).toBe('process message.delivered');
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'duplicate',
      'hookline.event': 'message.delivered',
      'messaging.message.id': d.deliveryId,
      'http.response.status_code': 200,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(childSpans).toHaveLength(0);
    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'duplicate', 'hookline.event': 'message.delivered' }),
      histogram('hookline.delivery.delay', {}),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'duplicate' }),
      inflightZero,
      histogram('hookline.store.duration', { 'hookline.store.operation': 'claim' }),
    ]);
  });

  it('unhandled: no handler takes the event; no store operation', async () => {
    const d = delivery('group.created');
    expect(await post(harness.url, d.body, d.headers)).toBe(200);
    const { delivery: span } = await spansOfRequest();
    expect(span.name).toBe('process group.created');
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'unhandled',
      'hookline.event': 'group.created',
      'messaging.message.id': d.deliveryId,
      'http.response.status_code': 200,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'unhandled', 'hookline.event': 'group.created' }),
      histogram('hookline.delivery.delay', {}),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'unhandled' }),
      inflightZero,
    ]);
  });

  it('PermanentFailure: answered 200, the claim released, the span an error of type PermanentFailure with the exception recorded', async () => {
    const d = delivery('message.failed');
    expect(await post(harness.url, d.body, d.headers)).toBe(200);
    const { delivery: span } = await spansOfRequest();
    expect(span.name).toBe('process message.failed');
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'failed',
      'hookline.event': 'message.failed',
      'messaging.message.id': d.deliveryId,
      'hookline.claims': 1,
      'http.response.status_code': 200,
      'error.type': 'PermanentFailure',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'PermanentFailure' });
    expect(span.events.map((event) => [event.name, event.attributes?.['exception.message']])).toEqual([['exception', 'unknown message']]);
    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'failed', 'hookline.event': 'message.failed' }),
      histogram('hookline.delivery.delay', {}),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'failed' }),
      inflightZero,
      histogram('hookline.store.duration', { 'hookline.store.operation': 'claim' }),
      histogram('hookline.store.duration', { 'hookline.store.operation': 'release' }),
    ]);
  });

  it('a thrown handler: 500, an error span typed by what was thrown, the claim released', async () => {
    const d = delivery('call.failed');
    expect(await post(harness.url, d.body, d.headers)).toBe(500);
    const { delivery: span } = await spansOfRequest();
    expect(span.name).toBe('process call.failed');
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'failed',
      'hookline.event': 'call.failed',
      'messaging.message.id': d.deliveryId,
      'hookline.claims': 1,
      'http.response.status_code': 500,
      'error.type': 'TypeError',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TypeError' });
    expect(span.events.map((event) => [event.name, event.attributes?.['exception.type']])).toEqual([['exception', 'TypeError']]);
    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'failed', 'hookline.event': 'call.failed' }),
      histogram('hookline.delivery.delay', {}),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'failed' }),
      inflightZero,
      histogram('hookline.store.duration', { 'hookline.store.operation': 'claim' }),
      histogram('hookline.store.duration', { 'hookline.store.operation': 'release' }),
    ]);
  });

  it('an ordering guard: reading and advancing its version record are store operations of their own', async () => {
    const d = delivery('message.edited');
    expect(await post(harness.url, d.body, d.headers)).toBe(200);
    await spansOfRequest();
    const operations = (await points())
      .filter((point) => point.name === 'hookline.store.duration')
      .map((point) => point.attributes['hookline.store.operation']);
    expect(operations).toEqual(expect.arrayContaining(['claim', 'readVersion', 'advanceVersion', 'complete']));
  });

  it('409 (the first copy still running): outcome duplicate, reason in_progress, not an error', async () => {
    let release = () => {};
    slowGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started = new Promise<void>((resolve) => {
      slowStarted = resolve;
    });
    const d = delivery('line.status_changed');
    const first = post(harness.url, d.body, d.headers);
    await started;
    expect(await post(harness.url, d.body, d.headers)).toBe(409);
    const { delivery: span } = await spansOfRequest();
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'duplicate',
      'hookline.event': 'line.status_changed',
      'messaging.message.id': d.deliveryId,
      'http.response.status_code': 409,
      'hookline.reason': 'in_progress',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    release();
    expect(await first).toBe(200);
    await spansOfRequest();
    const taken = await points();
    expect(taken.filter((point) => point.name === 'hookline.deliveries')).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'duplicate', 'hookline.event': 'line.status_changed' }),
      count('hookline.deliveries', { 'hookline.outcome': 'handled', 'hookline.event': 'line.status_changed' }),
    ]);
  });

  it('401: a `process` span with status ERROR and error.type INVALID_SIGNATURE; a verification failure counted', async () => {
    const d = delivery('message.delivered');
    const tampered = Buffer.from(d.body);
    tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 1;
    expect(await post(harness.url, tampered, d.headers)).toBe(401);
    const { delivery: span } = await spansOfRequest();
    expect(span.name).toBe('process');
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'rejected',
      'http.response.status_code': 401,
      'hookline.reason': 'mismatch',
      'error.type': 'INVALID_SIGNATURE',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'INVALID_SIGNATURE' });
    expect(span.events).toEqual([]);
    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'rejected' }),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'rejected' }),
      inflightZero,
      count('hookline.verification.failures', { 'hookline.reason': 'mismatch' }),
    ]);
  });

  it('a stale timestamp counts as a verification failure too (reason too_old)', async () => {
    const body = Buffer.from(
      `{"event":"message.delivered","deliveryId":"wdl_${randomBytes(8).toString('hex')}","timestamp":"2020-01-01T00:00:00.000Z","data":{}}`,
    );
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    expect(await post(harness.url, body, { 'content-type': 'application/json', 'x-service-signature': signature })).toBe(400);
    const { delivery: span } = await spansOfRequest();
    expect(span.attributes).toMatchObject({
      'hookline.outcome': 'rejected',
      'hookline.reason': 'too_old',
      'error.type': 'VALIDATION_ERROR',
    });
    const taken = await points();
    expect(taken).toContainEqual(count('hookline.verification.failures', { 'hookline.reason': 'too_old' }));
  });

  it('413 while streaming (the adapter refuses through answerError): a rejected `process` span', async () => {
    const d = delivery('message.delivered');
    const big = Buffer.alloc(MAX_BODY + 1024, 0x20);
    expect(await post(harness.url, big, d.headers)).toBe(413);
    const { delivery: span, server } = await spansOfRequest();
    expect(span.name).toBe('process');
    expect(span.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'rejected',
      'http.response.status_code': 413,
      'error.type': 'PAYLOAD_TOO_LARGE',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'PAYLOAD_TOO_LARGE' });
    expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'rejected' }),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'rejected' }),
      inflightZero,
    ]);
  });

  it('queued: the receipt span (202, outcome queued) and the worker span linked to it through traceparent', async () => {
    const d = delivery('message.read');
    expect(await post(queueHarness.url, d.body, d.headers)).toBe(202);
    // The worker may finish before the server span does: wait for both delivery spans and the server span.
    const workerSpans: ReadableSpan[] = [];
    await vi.waitFor(() => {
      workerSpans.push(...telemetry.takeSpans());
      expect(workerSpans.filter((span) => span.instrumentationScope.name === '@hookline/otel')).toHaveLength(2);
      expect(workerSpans.some((span) => span.kind === SpanKind.SERVER)).toBe(true);
    }, WAIT);
    seenSpans.push(...workerSpans);
    const ours = workerSpans.filter((span) => span.instrumentationScope.name === '@hookline/otel');
    const receipt = ours.find((span) => span.attributes['hookline.mode'] === 'receive')!;
    const server = workerSpans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(receipt.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(receipt.name).toBe('process message.read');
    expect(receipt.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'receive',
      'hookline.outcome': 'queued',
      'hookline.event': 'message.read',
      'messaging.message.id': d.deliveryId,
      // No 'hookline.claims': answer-fast mode's receipt claims nothing in the store.
      'http.response.status_code': 202,
      'hookline.queue.name': 'memory',
    });
    const work = ours.find((span) => span.attributes['hookline.mode'] === 'work')!;
    expect(work.name).toBe('process message.read');
    expect(work.kind).toBe(SpanKind.CONSUMER);
    expect(work.attributes).toEqual({
      ...BASE,
      'hookline.mode': 'work',
      'hookline.outcome': 'handled',
      'hookline.event': 'message.read',
      'messaging.message.id': d.deliveryId,
      'hookline.claims': 1,
      'hookline.tries': 1,
    });
    // Its own trace (the worker runs outside the request), linked to the receipt's span.
    expect(work.parentSpanContext).toBeUndefined();
    expect(work.links.map((link) => [link.context.traceId, link.context.spanId])).toEqual([
      [receipt.spanContext().traceId, receipt.spanContext().spanId],
    ]);
    // The handler's span is the worker span's child.
    const child = workerSpans.find((span) => span.name === 'worker work');
    expect(child?.parentSpanContext?.spanId).toBe(work.spanContext().spanId);
    await queue.drained();

    expect(await points()).toEqual([
      count('hookline.deliveries', { 'hookline.outcome': 'handled', 'hookline.event': 'message.read' }),
      count('hookline.deliveries', { 'hookline.outcome': 'queued', 'hookline.event': 'message.read' }),
      histogram('hookline.delivery.delay', {}),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'handled' }),
      histogram('hookline.delivery.duration', { 'hookline.outcome': 'queued' }),
      inflightZero,
      // The receipt's one operation is the enqueue, the queue's; the store has the worker's claim and completion.
      histogram('hookline.queue.duration', { 'hookline.queue.operation': 'enqueue', 'hookline.queue.name': 'memory' }),
      histogram('hookline.store.duration', { 'hookline.store.operation': 'claim' }),
      histogram('hookline.store.duration', { 'hookline.store.operation': 'complete' }),
    ]);
  });

  it('never puts the body, the signature or a header value in a span, an event, a link or a metric attribute', async () => {
    const d = delivery('message.delivered');
    await post(harness.url, d.body, d.headers);
    await spansOfRequest();
    await points();
    const recorded = JSON.stringify({
      spans: seenSpans.map((span) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        links: span.links,
        status: span.status,
        resource: span.resource.attributes,
      })),
      points: seenPoints.map((point) => point.attributes),
    });
    expect(seenSpans.length).toBeGreaterThan(10);
    expect(recorded).not.toContain(BODY_MARKER);
    expect(recorded).not.toContain('msg_otel');
    expect(recorded).not.toContain(d.signature);
    expect(recorded).not.toContain(d.signature.slice(0, 16));
    expect(recorded).not.toContain(SECRET);
  });
});
