// Helpers for core's own unit tests (not shipped: excluded in package.json "files" and not exported).
import { createHmac } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { afterEach, beforeEach, type MockInstance, onTestFinished, vi } from 'vitest';
import type { DeliveryTrace } from './delivery-trace';
import { DELIVERY_CHANNEL } from './diagnostics';
import type { ReceiverInput } from './endpoint';

export const SECRET = 'whsec_test_3b1f0c';

export function hmacHex(body: Uint8Array | string, secret = SECRET): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

let counter = 0;
export function deliveryId(): string {
  counter += 1;
  return `wdl_test${Date.now().toString(36)}${counter}`;
}

export function envelope(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event: 'message.delivered',
    deliveryId: deliveryId(),
    timestamp: new Date().toISOString(),
    data: { messageId: 'msg_1', from: '+14155550100', to: '+14155550101', lineId: 'lin_1', deliveredAt: new Date().toISOString() },
    ...overrides,
  };
}

/** A signed input for receiver.handle, with the three x-service-* headers. */
export function signed(
  body: Record<string, unknown> | string | Uint8Array,
  options: { secret?: string; headers?: Record<string, string | undefined> } = {},
): ReceiverInput {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body instanceof Uint8Array ? body : Buffer.from(JSON.stringify(body));
  const parsed = typeof body === 'object' && !(body instanceof Uint8Array) ? body : undefined;
  const headers: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'x-service-signature': hmacHex(bytes, options.secret),
    ...(parsed ? { 'x-service-event': String(parsed.event), 'x-service-delivery-id': String(parsed.deliveryId) } : {}),
    ...options.headers,
  };
  for (const key of Object.keys(headers)) if (headers[key] === undefined) delete headers[key];
  return { body: bytes, headers };
}

export interface AnswerBody {
  ok?: boolean;
  duplicate?: boolean;
  unhandled?: boolean;
  failed?: boolean;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

export function json(answer: { body: string }): AnswerBody {
  return JSON.parse(answer.body) as AnswerBody;
}

export const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Subscribes to the delivery tracing channel until the running test ends; `seen` lists each event as
 * [event name, a copy of the trace when it was published]. `onStart` gets the live trace at `start`
 * (a subscriber may write to it, as OpenTelemetry's does).
 */
export function watchDeliveryTraces(onStart?: (trace: DeliveryTrace) => void) {
  const seen: [name: string, trace: DeliveryTrace][] = [];
  const on = (name: string) => (message: unknown) => {
    const trace = message as DeliveryTrace;
    if (name === 'start') onStart?.(trace);
    seen.push([name, { ...trace }]);
  };
  const handlers = { start: on('start'), end: on('end'), asyncStart: on('asyncStart'), asyncEnd: on('asyncEnd'), error: on('error') };
  const channel = diagnostics.tracingChannel(DELIVERY_CHANNEL);
  channel.subscribe(handlers);
  onTestFinished(() => {
    channel.unsubscribe(handlers);
  });
  return { seen };
}

/**
 * For a test file about what the receiver writes on the console by itself: fake timers (they stand in
 * for the minute between summaries) and a silent, spied console.warn and console.error, restored
 * after each test. `warnings()` lists the lines written to console.warn.
 */
export function consoleNotes() {
  const spied = {} as { warn: MockInstance<typeof console.warn>; error: MockInstance<typeof console.error> };
  beforeEach(() => {
    vi.useFakeTimers();
    spied.warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    spied.error = vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
  return { spied, warnings: (): string[] => spied.warn.mock.calls.map(([line]) => String(line)) };
}
