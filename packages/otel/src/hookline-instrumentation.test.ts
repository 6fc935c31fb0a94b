// The instrumentation's own contract, driven by publishing hookline's channel events by hand (the
// order the core publishes them in): the Instrumentation lifecycle, registerInstrumentations(),
// W3C trace context in both directions, sampling, and deliveries it did not see start.
import { channel, tracingChannel } from 'node:diagnostics_channel';
import { context, type Span, SpanKind, trace } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryTrace } from './channels';
import { HooklineInstrumentation } from './hookline-instrumentation';
import { setUpTelemetry, type Telemetry, tearDownContext } from './test-support';

const delivery = tracingChannel('hookline:delivery');
const store = channel('hookline:store');
const queue = channel('hookline:queue');
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';

/** Publishes one delivery's trace the way the core does; `during` runs inside `runInScope`, like the handlers. */
function publish(fields: Partial<DeliveryTrace>, during?: () => void, before: Partial<DeliveryTrace> = {}): DeliveryTrace {
  const ctx: DeliveryTrace = { mode: 'receive', receivedAt: Date.now(), storeMs: {}, ...before };
  delivery.start.publish(ctx);
  Object.assign(ctx, fields);
  if (during !== undefined) (ctx.runInScope ?? ((fn) => fn()))(during);
  delivery.end.publish(ctx);
  if (ctx.error !== undefined) delivery.error.publish(ctx);
  delivery.asyncStart.publish(ctx);
  delivery.asyncEnd.publish(ctx);
  return ctx;
}

const listening = () => delivery.start.hasSubscribers;

describe('HooklineInstrumentation', () => {
  let telemetry: Telemetry;
  beforeAll(() => {
    telemetry = setUpTelemetry();
  });
  afterEach(async () => {
    telemetry.takeSpans();
    await telemetry.takePoints();
  });
  afterAll(async () => {
    await telemetry.shutdown();
    tearDownContext();
  });

  it('has the Instrumentation shape: name, version, config with enabled defaulting to true', () => {
    const instrumentation = new HooklineInstrumentation({ enabled: false });
    expect(instrumentation.instrumentationName).toBe('@hookline/otel');
    expect(instrumentation.instrumentationVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(instrumentation.getConfig()).toEqual({ enabled: false });
    instrumentation.setConfig({});
    expect(instrumentation.getConfig()).toEqual({ enabled: true });
  });

  it('subscribes on enable and at construction by default; disable (twice) unsubscribes, so the core stops publishing', () => {
    telemetry.instrumentation.disable();
    expect(listening()).toBe(false);
    const instrumentation = new HooklineInstrumentation();
    expect(listening()).toBe(true);
    instrumentation.enable(); // idempotent: one subscription, so one disable ends it
    instrumentation.disable();
    instrumentation.disable();
    expect(listening()).toBe(false);
    expect(store.hasSubscribers).toBe(false);
    expect(queue.hasSubscribers).toBe(false);
    telemetry.instrumentation.enable();
    expect(listening()).toBe(true);
  });

  it('registerInstrumentations() gives it the providers and enables it; its unregister function disables it', async () => {
    telemetry.instrumentation.disable();
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const instrumentation = new HooklineInstrumentation({ enabled: false });
    expect(listening()).toBe(false);
    const unregister = registerInstrumentations({
      instrumentations: [instrumentation],
      tracerProvider,
      meterProvider: new MeterProvider(),
    });
    expect(listening()).toBe(true);
    publish({ event: 'message.sent', deliveryId: 'wdl_registered', outcome: 'handled', status: 200 });
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['process message.sent']);
    unregister();
    expect(listening()).toBe(false);
    telemetry.instrumentation.enable();
    await tracerProvider.shutdown();
  });

  it('receive mode: sets traceparent (and tracestate) of the delivery span at start, for the queued job', () => {
    let inside: Span | undefined;
    const ctx = publish({ event: 'message.sent', outcome: 'queued', status: 202 }, () => {
      inside = trace.getActiveSpan();
    });
    const [span] = telemetry.takeSpans();
    expect(ctx.traceparent).toBe(`00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`);
    expect(ctx.tracestate).toBeUndefined();
    expect(inside?.spanContext().spanId).toBe(span?.spanContext().spanId);
  });

  it('work mode: a traceparent present at start becomes a link at creation, tracestate kept; no traceparent is written', () => {
    const traceparent = `00-${TRACE_ID}-${SPAN_ID}-01`;
    const ctx = publish({ event: 'message.sent', outcome: 'handled', tries: 2 }, undefined, {
      mode: 'work',
      traceparent,
      tracestate: 'vendor=abc,other=1',
    });
    const [span] = telemetry.takeSpans();
    expect(span?.kind).toBe(SpanKind.CONSUMER);
    expect(span?.links).toHaveLength(1);
    expect(span?.links[0]?.context).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true });
    expect(span?.links[0]?.context.traceState?.serialize()).toBe('vendor=abc,other=1');
    expect(ctx.traceparent).toBe(traceparent);
    expect(span?.attributes['hookline.tries']).toBe(2);
    expect(span?.attributes['http.response.status_code']).toBeUndefined();
  });

  it('work mode: a malformed traceparent is no link and no error', () => {
    publish({ event: 'message.sent', outcome: 'handled' }, undefined, { mode: 'work', traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01` });
    publish({ event: 'message.sent', outcome: 'handled' }, undefined, { mode: 'work', traceparent: 'not a traceparent' });
    const spans = telemetry.takeSpans();
    expect(spans.map((span) => span.links.length)).toEqual([0, 0]);
  });

  it('the span is the child of the context active at start', () => {
    const tracer = telemetry.tracerProvider.getTracer('test');
    const parent = tracer.startSpan('POST /webhooks', { kind: SpanKind.SERVER });
    context.with(trace.setSpan(context.active(), parent), () => publish({ outcome: 'rejected', status: 405, code: 'METHOD_NOT_ALLOWED' }));
    parent.end();
    const [span] = telemetry.takeSpans();
    expect(span?.name).toBe('process');
    expect(span?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span?.attributes['error.type']).toBe('METHOD_NOT_ALLOWED');
  });

  it('disabled mid-delivery: the running delivery still ends its span, then nothing listens any more', () => {
    const instrumentation = new HooklineInstrumentation({ enabled: false });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    instrumentation.setTracerProvider(provider);
    telemetry.instrumentation.disable();
    instrumentation.enable();
    const ctx: DeliveryTrace = { mode: 'receive', receivedAt: Date.now(), storeMs: {} };
    delivery.start.publish(ctx);
    instrumentation.disable();
    expect(listening()).toBe(false);
    expect(delivery.asyncEnd.hasSubscribers).toBe(true);
    delivery.start.publish({ mode: 'receive', receivedAt: Date.now(), storeMs: {} }); // not ours any more
    delivery.asyncEnd.publish(Object.assign(ctx, { event: 'message.sent', outcome: 'handled', status: 200 }));
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['process message.sent']);
    expect(delivery.asyncEnd.hasSubscribers).toBe(false);
    instrumentation.enable(); // and again, from scratch
    expect(listening()).toBe(true);
    instrumentation.disable();
    expect(delivery.asyncEnd.hasSubscribers).toBe(false);
    telemetry.instrumentation.enable();
  });

  it('a delivery that started before it subscribed is ignored when it settles', async () => {
    telemetry.instrumentation.disable();
    const ctx: DeliveryTrace = { mode: 'receive', receivedAt: Date.now(), storeMs: {} };
    telemetry.instrumentation.enable();
    delivery.asyncEnd.publish(Object.assign(ctx, { outcome: 'handled' }));
    expect(telemetry.takeSpans()).toEqual([]);
    expect((await telemetry.takePoints()).map((point) => [point.name, point.value])).toEqual([['hookline.inflight', 0]]);
  });

  it('store operations: seconds by operation, and error.type when the store failed', async () => {
    store.publish({ operation: 'claim', durationMs: 2.5, deliveryId: 'wdl_store' });
    store.publish({ operation: 'claim', durationMs: 1, deliveryId: 'wdl_store', error: new RangeError('timed out') });
    store.publish({ operation: 'extend', durationMs: 4, deliveryId: 'wdl_store' });
    const points = (await telemetry.takePoints()).filter((point) => point.name === 'hookline.store.duration');
    expect(points.map((point) => [point.name, point.attributes, point.count, point.sum])).toEqual([
      ['hookline.store.duration', { 'hookline.store.operation': 'claim', 'error.type': 'RangeError' }, 1, 0.001],
      ['hookline.store.duration', { 'hookline.store.operation': 'claim' }, 1, 0.0025],
      ['hookline.store.duration', { 'hookline.store.operation': 'extend' }, 1, 0.004],
    ]);
  });

  it("queue operations: seconds by operation and queue, apart from the store's, and error.type when the queue failed", async () => {
    queue.publish({ operation: 'enqueue', queue: 'bullmq', durationMs: 3, deliveryId: 'wdl_queue' });
    queue.publish({ operation: 'enqueue', queue: 'sqs', durationMs: 2, deliveryId: 'wdl_queue', error: new TypeError('queue down') });
    const points = await telemetry.takePoints();
    expect(points.filter((point) => point.name === 'hookline.store.duration')).toEqual([]);
    expect(
      points.filter((point) => point.name === 'hookline.queue.duration').map((point) => [point.attributes, point.count, point.sum]),
    ).toEqual([
      [{ 'hookline.queue.operation': 'enqueue', 'hookline.queue.name': 'bullmq' }, 1, 0.003],
      [{ 'hookline.queue.operation': 'enqueue', 'hookline.queue.name': 'sqs', 'error.type': 'TypeError' }, 1, 0.002],
    ]);
  });

  it('a receipt whose queue failed: the span names the queue, its reason and the refusal', () => {
    publish({
      event: 'message.sent',
      outcome: 'rejected',
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      reason: 'queue_unavailable',
      queue: 'sqs',
    });
    const [span] = telemetry.takeSpans();
    expect(span?.attributes).toMatchObject({
      'hookline.queue.name': 'sqs',
      'hookline.reason': 'queue_unavailable',
      'error.type': 'SERVICE_UNAVAILABLE',
    });
  });

  it('delay is receipt time minus the body timestamp, in seconds; a non-Error throw is error.type _OTHER', async () => {
    const receivedAt = Date.now();
    delivery.start.publish({ mode: 'receive', receivedAt, storeMs: {} });
    const ctx = { mode: 'receive', receivedAt, storeMs: {} } as DeliveryTrace;
    delivery.start.publish(ctx);
    Object.assign(ctx, { event: 'call.failed', timestampMs: receivedAt - 90_000, outcome: 'failed', status: 500, error: 'a string' });
    delivery.asyncEnd.publish(ctx);
    const [span] = telemetry.takeSpans();
    expect(span?.attributes['error.type']).toBe('_OTHER');
    const points = await telemetry.takePoints();
    expect(points.find((point) => point.name === 'hookline.delivery.delay')).toMatchObject({ count: 1, sum: 90 });
    // One start without its end: one delivery still in flight.
    expect(points.find((point) => point.name === 'hookline.inflight')).toMatchObject({ value: 1 });
    delivery.asyncEnd.publish(ctx); // settling twice changes nothing
    expect(telemetry.takeSpans()).toEqual([]);
  });

  it('counts and durations kept per outcome and event: each series keeps its own attributes', async () => {
    publish({ event: 'message.sent', deliveryId: 'wdl_a', outcome: 'handled', status: 200 });
    publish({ event: 'message.sent', deliveryId: 'wdl_b', outcome: 'handled', status: 200 });
    publish({ event: 'call.failed', deliveryId: 'wdl_c', outcome: 'handled', status: 200 });
    publish({ event: 'message.sent', deliveryId: 'wdl_d', outcome: 'duplicate', status: 200 });
    publish({ outcome: 'rejected', status: 413, code: 'PAYLOAD_TOO_LARGE' });
    publish({ outcome: 'rejected', status: 413, code: 'PAYLOAD_TOO_LARGE' });
    const points = await telemetry.takePoints();
    const series = (name: string) =>
      points.filter((point) => point.name === name).map((point) => [point.attributes, point.value ?? point.count]);
    expect(series('hookline.deliveries')).toEqual([
      [{ 'hookline.outcome': 'duplicate', 'hookline.event': 'message.sent' }, 1],
      [{ 'hookline.outcome': 'handled', 'hookline.event': 'call.failed' }, 1],
      [{ 'hookline.outcome': 'handled', 'hookline.event': 'message.sent' }, 2],
      [{ 'hookline.outcome': 'rejected' }, 2],
    ]);
    expect(series('hookline.delivery.duration')).toEqual([
      [{ 'hookline.outcome': 'duplicate' }, 1],
      [{ 'hookline.outcome': 'handled' }, 3],
      [{ 'hookline.outcome': 'rejected' }, 2],
    ]);
    // What the span got is never written into the kept attribute sets.
    for (const [attributes] of [...series('hookline.deliveries'), ...series('hookline.delivery.duration')])
      expect(Object.keys(attributes as object).every((key) => key === 'hookline.outcome' || key === 'hookline.event')).toBe(true);
  });

  it("the delivery's duration is its span's with the SDK, and the clock's for a span that keeps none", async () => {
    publish({ event: 'message.sent', outcome: 'handled', status: 200 }, () => {
      const until = performance.now() + 5;
      while (performance.now() < until); // 5 ms in the handlers
    });
    const [span] = telemetry.takeSpans();
    const spanSeconds = span!.duration[0] + span!.duration[1] / 1e9;
    const [recorded] = (await telemetry.takePoints()).filter((point) => point.name === 'hookline.delivery.duration');
    expect(recorded?.sum).toBe(spanSeconds);
    expect(spanSeconds).toBeGreaterThanOrEqual(0.005);

    // No tracer provider: the API's no-op spans, timed by the instrumentation itself.
    const untraced = new HooklineInstrumentation({ enabled: false });
    untraced.setMeterProvider(telemetry.meterProvider);
    telemetry.instrumentation.disable();
    untraced.enable();
    publish({ event: 'message.sent', outcome: 'handled', status: 200 }, () => {
      const until = performance.now() + 5;
      while (performance.now() < until);
    });
    untraced.disable();
    telemetry.instrumentation.enable();
    const [timed] = (await telemetry.takePoints()).filter((point) => point.name === 'hookline.delivery.duration');
    expect(timed).toMatchObject({ count: 1 });
    expect(timed?.sum).toBeGreaterThanOrEqual(0.005);
  });

  it('an unsampled delivery: no span recorded, the metrics still are, traceparent carries flags 00', async () => {
    const instrumentation = new HooklineInstrumentation({ enabled: false });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [new SimpleSpanProcessor(exporter)] });
    instrumentation.setTracerProvider(provider);
    instrumentation.setMeterProvider(telemetry.meterProvider);
    telemetry.instrumentation.disable();
    instrumentation.enable();
    const ctx = publish({ event: 'message.sent', outcome: 'handled', status: 200 });
    instrumentation.disable();
    telemetry.instrumentation.enable();
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(ctx.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const points = await telemetry.takePoints();
    expect(points.find((point) => point.name === 'hookline.deliveries')).toMatchObject({ value: 1 });
    await provider.shutdown();
  });
});
