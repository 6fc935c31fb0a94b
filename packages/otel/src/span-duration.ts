import type { HrTime, Span } from '@opentelemetry/api';

// The OpenTelemetry SDK's recording spans keep their own duration (`ReadableSpan.duration`,
// [seconds, nanoseconds], set by `end()`), measured from the same clock readings as the span's start
// and end. The delivery-duration histogram takes it from there rather than reading the clock twice
// more per delivery: each performance.now() took ~90 ns on the benchmark machine, ~0.2 µs of a
// delivery with the SDK. Other spans (the API's no-op spans, unsampled ones) have none: those
// deliveries are timed with performance.now(). (A handler that ends the delivery's span itself, the
// active span while it runs, ends the delivery's duration there too.)

/** Whether `span` will know its duration once ended (it is the SDK's: an [s, ns] pair, [-1, -1] until then). */
export function keepsDuration(span: Span): boolean {
  const { duration } = span as { duration?: unknown };
  return Array.isArray(duration) && duration.length === 2;
}

/** The duration, in seconds, of an ended span that `keepsDuration` said keeps one. */
export function spanSeconds(span: Span): number {
  const [seconds, nanoseconds] = (span as unknown as { duration: HrTime }).duration;
  return seconds + nanoseconds / 1e9;
}
