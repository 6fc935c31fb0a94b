import { createTraceState, INVALID_SPANID, INVALID_TRACEID, isSpanContextValid, type Link, type SpanContext } from '@opentelemetry/api';

// W3C Trace Context (https://www.w3.org/TR/trace-context/#traceparent-header), version 00:
// version-traceid-parentid-flags. Written and read here rather than through the global propagator,
// so a queued delivery keeps its link even when the application registered another propagator (or none).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

// The flags byte as two hex digits, looked up rather than formatted: 5-12 ns per receipt rather than
// 17-55 ns for Number#toString(16) and the padding, in a loop on the benchmark machine.
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** The `traceparent` of a span context, or undefined for an invalid one (a no-op tracer's). */
export function formatTraceparent(spanContext: SpanContext): string | undefined {
  // Tracers make well-formed ids; the no-op tracer's are all zeros. (Cheaper than isSpanContextValid's regular expressions.)
  if (spanContext.traceId === INVALID_TRACEID || spanContext.spanId === INVALID_SPANID) return undefined;
  return `00-${spanContext.traceId}-${spanContext.spanId}-${HEX_BYTES[spanContext.traceFlags & 0xff]}`;
}

/** A span link to the context a `traceparent` (and `tracestate`) carries; undefined when it does not parse. */
export function linkFromTraceparent(traceparent: string, tracestate: string | undefined): Link | undefined {
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  // Version ff is forbidden; a future version may append fields (the optional tail above), version 00 may not.
  if (version === 'ff' || (version === '00' && traceparent.length !== 55)) return undefined;
  const context: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & 0xff, isRemote: true };
  if (!isSpanContextValid(context)) return undefined;
  if (tracestate !== undefined && tracestate !== '') context.traceState = createTraceState(tracestate);
  return { context };
}
