/**
 * What the otel suite and its profiling driver share: the SDK set up with exporters that drop
 * everything, the signed deliveries, and the SDK's floor (the instrumentation's span and recordings,
 * made directly).
 */
import type { ReceiverInput } from '@hookline/core';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { signedHeaders, signedPool } from '../lib/payloads';

// Exporters that drop everything: the SDK does all its work, nothing leaves the process.
const noopSpanExporter: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
const noopMetricExporter: PushMetricExporter = {
  export: (_metrics, done) => done({ code: 0 }),
  shutdown: async () => {},
  forceFlush: async () => {},
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
};

/** The AsyncLocalStorage context manager (registered globally) and providers exporting to no-op exporters. */
export function sdkProviders(): { tracerProvider: BasicTracerProvider; meterProvider: MeterProvider } {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noopSpanExporter)] }),
    meterProvider: new MeterProvider({
      readers: [new PeriodicExportingMetricReader({ exporter: noopMetricExporter, exportIntervalMillis: 1000 })],
    }),
  };
}

export interface Delivery {
  input: ReceiverInput;
  deliveryId: string;
}

/** 2,048 signed 1 KB `message.inbound` deliveries, stamped now. */
export function deliveries(): Delivery[] {
  return signedPool('message.inbound', 1024, 2048).map((body) => ({
    deliveryId: body.deliveryId,
    input: { body: body.bytes, headers: signedHeaders(body) },
  }));
}

// The instrumentation's bucket boundaries: a histogram's recording searches them.
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 30];
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const DELAY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 150, 300, 900, 1800, 3600, 7200, 21600, 43200, 86400, 115200];

/**
 * The SDK work the instrumentation asks for per handled delivery, made directly: the CONSUMER span
 * with the same attributes, renamed once the event is known, made the active span for a scope (where
 * the handlers run), ended; and the same four histogram recordings (duration by outcome, delay, two
 * store operations by operation) into histograms with the same boundaries.
 */
export function sdkFloor(tracerProvider: BasicTracerProvider, meterProvider: MeterProvider): (deliveryId: string) => void {
  const tracer = tracerProvider.getTracer('bench-floor');
  const meter = meterProvider.getMeter('bench-floor');
  const duration = meter.createHistogram('floor.duration', { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS } });
  const delay = meter.createHistogram('floor.delay', { unit: 's', advice: { explicitBucketBoundaries: DELAY_BUCKETS } });
  const storeDuration = meter.createHistogram('floor.store', { unit: 's', advice: { explicitBucketBoundaries: STORE_BUCKETS } });
  const handled = { 'hookline.outcome': 'handled' };
  const claim = { 'hookline.store.operation': 'claim' };
  const complete = { 'hookline.store.operation': 'complete' };
  const inScope = () => undefined;
  return (deliveryId) => {
    const parent = context.active();
    const span = tracer.startSpan(
      'process',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'hookline',
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'hookline.mode': 'receive',
        },
      },
      parent,
    );
    context.with(trace.setSpan(parent, span), inScope);
    span.updateName('process message.inbound');
    span.setAttributes({
      'hookline.outcome': 'handled',
      'hookline.event': 'message.inbound',
      'messaging.message.id': deliveryId,
      'hookline.attempt': 1,
      'http.response.status_code': 200,
    });
    span.end();
    duration.record(0.00001, handled);
    delay.record(0.5);
    storeDuration.record(0.000001, claim);
    storeDuration.record(0.000001, complete);
  };
}
