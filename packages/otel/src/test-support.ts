// The OpenTelemetry SDK set up for tests: in-memory spans, a metric reader collected on demand (delta
// temporality, so each collection holds only what happened since the last), AsyncLocalStorage context.
import { context, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { HooklineInstrumentation } from './hookline-instrumentation';

class CollectOnDemand extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.DELTA });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** One metric point, flattened: a sum's value, or a histogram's count, sum and bucket boundaries. */
export interface Point {
  name: string;
  unit: string;
  attributes: Attributes;
  value?: number;
  count?: number;
  sum?: number;
  boundaries?: number[];
}

export interface Telemetry {
  instrumentation: HooklineInstrumentation;
  tracerProvider: BasicTracerProvider;
  meterProvider: MeterProvider;
  /** Spans ended since the last call, in the order they ended. */
  takeSpans(): ReadableSpan[];
  /** Metric points recorded since the last call, sorted by name; counters that did not move left out, the in-flight count always in. */
  takePoints(): Promise<Point[]>;
  shutdown(): Promise<void>;
}

let contextManager: AsyncLocalStorageContextManager | undefined;

/** An enabled instrumentation wired to fresh providers (the global ones are left alone, but for the context manager). */
export function setUpTelemetry(): Telemetry {
  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectOnDemand();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const instrumentation = new HooklineInstrumentation({ enabled: false });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.setMeterProvider(meterProvider);
  instrumentation.enable();
  return {
    instrumentation,
    tracerProvider,
    meterProvider,
    takeSpans() {
      const spans = exporter.getFinishedSpans();
      exporter.reset();
      return spans;
    },
    async takePoints() {
      const { resourceMetrics } = await reader.collect();
      const points: Point[] = [];
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          for (const point of metric.dataPoints) {
            const base = { name: metric.descriptor.name, unit: metric.descriptor.unit, attributes: point.attributes };
            if (metric.dataPointType === DataPointType.HISTOGRAM) {
              const value = point.value as { count: number; sum?: number; buckets: { boundaries: number[] } };
              points.push({ ...base, count: value.count, sum: value.sum, boundaries: value.buckets.boundaries });
            } else if (!(metric.dataPointType === DataPointType.SUM && metric.isMonotonic && point.value === 0)) {
              // An observed counter reports every series it ever saw; a delta of 0 is "nothing happened".
              points.push({ ...base, value: point.value as number });
            }
          }
        }
      }
      return points.sort(
        (a, b) => a.name.localeCompare(b.name) || JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)),
      );
    },
    async shutdown() {
      instrumentation.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** Tears down the global context manager set by `setUpTelemetry`. */
export function tearDownContext(): void {
  context.disable();
  contextManager = undefined;
}
