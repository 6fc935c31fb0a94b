import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  context,
  type Link,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import {
  DELIVERY_ASYNC_END,
  DELIVERY_START,
  type DeliveryTrace,
  QUEUE_CHANNEL,
  type QueueOperationMessage,
  STORE_CHANNEL,
  type StoreOperationMessage,
} from './channels';
import { DeliveryMetrics } from './delivery-metrics';
import { createFailureReport, type FailureReport } from './failures';
import {
  ATTR_HOOKLINE_MODE,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  MESSAGING_SYSTEM,
} from './semconv';
import { keepsDuration, spanSeconds } from './span-duration';
import { describeOutcome } from './span-outcome';
import { formatTraceparent, linkFromTraceparent } from './trace-context';
import { version } from './version';

/** Options of `HooklineInstrumentation` (the shape every OpenTelemetry instrumentation config has). */
export interface HooklineInstrumentationConfig {
  /**
   * Subscribe at construction. `registerInstrumentations()` and NodeSDK enable a disabled one anyway.
   * @default true
   */
  enabled?: boolean;
}

const INSTRUMENTATION_NAME = '@hookline/otel';

/** What the instrumentation keeps per delivery, on the core's trace object under its own symbol. */
interface DeliveryState {
  span: Span;
  /** performance.now() at the start; -1 when the span times itself (read from it once ended). */
  startedAt: number;
  linked: boolean;
  /** The instruments it started with (setMeterProvider may replace them meanwhile). */
  metrics: DeliveryMetrics;
}

/**
 * OpenTelemetry instrumentation for hookline: one CONSUMER span `process <event>` per delivery and
 * the `hookline.*` metrics, from what `@hookline/core` publishes on `node:diagnostics_channel`. The
 * delivery span is the child of the span active when the receiver starts (the HTTP server span),
 * and the active span while the handlers run, so their own spans are its children. In answer-fast
 * mode the receipt's span context travels with the queued job (W3C `traceparent`) and the worker's
 * span links to it. No attribute ever holds the body, the signature or a header.
 *
 * It implements the `Instrumentation` interface of `@opentelemetry/instrumentation` without depending
 * on it: nothing is patched, so none of its module-loading hooks are needed.
 *
 * @example
 * import { NodeSDK } from '@opentelemetry/sdk-node';
 * import { HooklineInstrumentation } from '@hookline/otel';
 *
 * const sdk = new NodeSDK({ instrumentations: [new HooklineInstrumentation()] });
 * sdk.start();
 */
export class HooklineInstrumentation {
  /** The instrumentation scope's name, `@hookline/otel`. */
  readonly instrumentationName: string = INSTRUMENTATION_NAME;
  /** The instrumentation scope's version (this package's). */
  readonly instrumentationVersion: string = version;

  private config: HooklineInstrumentationConfig;
  private tracer: Tracer;
  private metrics: DeliveryMetrics;
  private subscribed = false;
  // Deliveries this instance started and has not ended: after disable(), it keeps listening for their
  // ends until they are all over, so no span is left open.
  private open = 0;
  private listeningForEnds = false;
  // One key per instance: two instances never read each other's spans.
  private readonly state = Symbol('@hookline/otel delivery');
  private readonly failed: FailureReport = createFailureReport();

  constructor(config: HooklineInstrumentationConfig = {}) {
    this.config = { enabled: true, ...config };
    this.tracer = trace.getTracer(INSTRUMENTATION_NAME, version);
    this.metrics = new DeliveryMetrics(metrics.getMeter(INSTRUMENTATION_NAME, version));
    if (this.config.enabled) this.enable();
  }

  /** Subscribes to hookline's channels (idempotent). */
  enable(): void {
    if (this.subscribed) return;
    this.subscribed = true;
    subscribe(DELIVERY_START, this.onStart);
    subscribe(STORE_CHANNEL, this.onStore);
    subscribe(QUEUE_CHANNEL, this.onQueue);
    if (!this.listeningForEnds) {
      this.listeningForEnds = true;
      subscribe(DELIVERY_ASYNC_END, this.onSettled);
    }
  }

  /**
   * Unsubscribes: no new delivery gets a span, and once the deliveries already running have ended
   * theirs, nothing listens and the core stops publishing.
   */
  disable(): void {
    if (!this.subscribed) return;
    this.subscribed = false;
    unsubscribe(DELIVERY_START, this.onStart);
    unsubscribe(STORE_CHANNEL, this.onStore);
    unsubscribe(QUEUE_CHANNEL, this.onQueue);
    if (this.open === 0) this.stopListeningForEnds();
  }

  private stopListeningForEnds(): void {
    this.listeningForEnds = false;
    unsubscribe(DELIVERY_ASYNC_END, this.onSettled);
  }

  /** Uses this provider's tracer from now on (the global one until then). */
  setTracerProvider(tracerProvider: TracerProvider): void {
    this.tracer = tracerProvider.getTracer(INSTRUMENTATION_NAME, version);
  }

  /** Uses this provider's meter from now on (the global one at construction until then). */
  setMeterProvider(meterProvider: MeterProvider): void {
    this.metrics = new DeliveryMetrics(meterProvider.getMeter(INSTRUMENTATION_NAME, version));
  }

  /** Replaces the configuration (`enabled` is read by `registerInstrumentations()`). */
  setConfig(config: HooklineInstrumentationConfig = {}): void {
    this.config = { enabled: true, ...config };
  }

  /** The configuration, with its defaults. */
  getConfig(): HooklineInstrumentationConfig {
    return this.config;
  }

  // Each subscriber catches everything: node hands a subscriber's throw to uncaughtException, and the
  // tracer and the meter run the application's SDK configuration (failures.ts).
  private readonly onStart = (message: unknown): void => {
    try {
      this.startSpan(message as DeliveryTrace & Record<symbol, DeliveryState | undefined>);
    } catch (error) {
      this.failed("starting a delivery's span", error);
    }
  };

  private startSpan(delivery: DeliveryTrace & Record<symbol, DeliveryState | undefined>): void {
    const parent = context.active();
    let links: Link[] | undefined;
    // Work mode: the receipt's context, carried by the job (receive mode writes it, below).
    if (delivery.mode === 'work' && delivery.traceparent !== undefined) {
      const link = linkFromTraceparent(delivery.traceparent, delivery.tracestate);
      if (link !== undefined) links = [link];
    }
    const span = this.tracer.startSpan(
      'process',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM,
          [ATTR_MESSAGING_OPERATION_TYPE]: 'process',
          [ATTR_MESSAGING_OPERATION_NAME]: 'process',
          [ATTR_HOOKLINE_MODE]: delivery.mode,
        },
        links,
      },
      parent,
    );
    // The context is made only when handlers run (not for refusals, duplicates, unhandled events).
    delivery.runInScope = (fn) => context.with(trace.setSpan(parent, span), fn);
    if (delivery.mode === 'receive') {
      // The core copies these into a queued job: the worker's span links back to this one.
      const spanContext = span.spanContext();
      const traceparent = formatTraceparent(spanContext);
      if (traceparent !== undefined) {
        delivery.traceparent = traceparent;
        const tracestate = spanContext.traceState?.serialize();
        if (tracestate) delivery.tracestate = tracestate;
      }
    }
    delivery[this.state] = {
      span,
      startedAt: keepsDuration(span) ? -1 : performance.now(),
      linked: links !== undefined,
      metrics: this.metrics,
    };
    this.open++;
    this.metrics.started();
  }

  private readonly onSettled = (message: unknown): void => {
    const delivery = message as DeliveryTrace & Record<symbol, DeliveryState | undefined>;
    const state = delivery[this.state];
    // Started before this instance subscribed, or settled twice: nothing of ours to end.
    if (state === undefined) return;
    delivery[this.state] = undefined;
    const outcome = delivery.outcome ?? 'rejected';
    const { span, startedAt } = state;
    try {
      if (span.isRecording()) describeOutcome(span, delivery, outcome, state.linked);
      span.end();
    } catch (error) {
      this.failed("ending a delivery's span", error);
    }
    try {
      const seconds = startedAt < 0 ? spanSeconds(span) : (performance.now() - startedAt) / 1000;
      state.metrics.settled(delivery, outcome, seconds);
    } catch (error) {
      this.failed("recording a delivery's metrics", error);
    }
    if (--this.open === 0 && !this.subscribed) this.stopListeningForEnds();
  };

  private readonly onStore = (message: unknown): void => {
    try {
      this.metrics.store(message as StoreOperationMessage);
    } catch (error) {
      this.failed('recording a store operation', error);
    }
  };

  private readonly onQueue = (message: unknown): void => {
    try {
      this.metrics.queue(message as QueueOperationMessage);
    } catch (error) {
      this.failed('recording a queue operation', error);
    }
  };
}
