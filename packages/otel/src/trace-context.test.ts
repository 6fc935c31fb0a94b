import { TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { formatTraceparent, linkFromTraceparent } from './trace-context';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('W3C traceparent', () => {
  it('formats a span context and reads it back', () => {
    const traceparent = formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED });
    expect(traceparent).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(linkFromTraceparent(traceparent!, undefined)?.context).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 1,
      isRemote: true,
    });
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0x1f })).toBe(`00-${TRACE_ID}-${SPAN_ID}-1f`);
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.NONE })).toBe(`00-${TRACE_ID}-${SPAN_ID}-00`);
  });

  it('writes nothing for an invalid span context (a no-op tracer)', () => {
    expect(formatTraceparent({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 })).toBeUndefined();
  });

  it.each([
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['version 00 with a tail', `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['short', `00-${TRACE_ID}-${SPAN_ID}-1`],
    ['empty', ''],
  ])('refuses %s', (_name, traceparent) => {
    expect(linkFromTraceparent(traceparent, undefined)).toBeUndefined();
  });

  it('accepts a later version with more fields, and keeps tracestate', () => {
    const link = linkFromTraceparent(`01-${TRACE_ID}-${SPAN_ID}-00-future`, 'congo=t61rcWkgMzE');
    expect(link?.context.traceId).toBe(TRACE_ID);
    expect(link?.context.traceState?.get('congo')).toBe('t61rcWkgMzE');
  });
});
