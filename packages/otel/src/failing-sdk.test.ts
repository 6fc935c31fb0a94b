// The OpenTelemetry SDK the instrumentation calls is the application's configuration (a sampler, span
// processors, metric views and readers), and any part of it may throw. The instrumentation runs in
// node:diagnostics_channel subscribers, whose throws node hands to uncaughtException (the process
// ends): so with an SDK that throws everywhere, a real receiver's answers are unchanged, nothing is
// left uncaught, and the first failure of each kind reaches console.error once.
import { createHmac, randomBytes } from 'node:crypto';
import { createReceiver, type DeliveryQueue } from '@hookline/core';
import type { Histogram, Meter, MeterProvider } from '@opentelemetry/api';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { HooklineInstrumentation } from './hookline-instrumentation';

const SECRET = 'whsec_otel_failing_sdk';

function signed(event: string, data: Record<string, unknown> = {}, secret = SECRET) {
  const body = Buffer.from(
    JSON.stringify({ event, deliveryId: `wdl_${randomBytes(8).toString('hex')}`, timestamp: new Date().toISOString(), data }),
  );
  return {
    body,
    headers: { 'content-type': 'application/json', 'x-service-signature': createHmac('sha256', secret).update(body).digest('hex') },
  };
}

const broken = (what: string) => () => {
  throw new Error(`${what} is broken`);
};

/** A span processor that throws when a span ends (an exporter that fails at once does that). */
const brokenProcessor: SpanProcessor = {
  onStart: () => {},
  onEnd: broken('onEnd'),
  forceFlush: async () => {},
  shutdown: async () => {},
};

/** A meter provider whose instruments throw when they record (a broken view or reader does that). */
const brokenMeters: MeterProvider = {
  getMeter: () =>
    ({
      createHistogram: () => ({ record: broken('histogram.record') }) as unknown as Histogram,
      createCounter: () => ({ add: broken('counter.add') }),
      createObservableCounter: () => ({ addCallback: () => {} }),
      createObservableUpDownCounter: () => ({ addCallback: () => {} }),
    }) as unknown as Meter,
};

let consoleError: MockInstance<typeof console.error>;
let uncaught: ReturnType<typeof vi.fn<(error: unknown) => void>>;
let instrumentation: HooklineInstrumentation;

beforeEach(() => {
  consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
  uncaught = vi.fn<(error: unknown) => void>();
  process.on('uncaughtException', uncaught);
});

afterEach(() => {
  instrumentation.disable();
  process.off('uncaughtException', uncaught);
  vi.restoreAllMocks();
});

/** Lets a nextTick (where node would rethrow a subscriber's error) and the handlers' promises run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('an OpenTelemetry SDK that throws', () => {
  it('in its span processors and its instruments: every answer is unchanged, nothing uncaught, each kind written once', async () => {
    instrumentation = new HooklineInstrumentation({ enabled: false });
    instrumentation.setTracerProvider(new BasicTracerProvider({ spanProcessors: [brokenProcessor] }));
    instrumentation.setMeterProvider(brokenMeters);
    instrumentation.enable();
    const receiver = createReceiver({ secret: SECRET, logger: false });
    receiver.onError(() => {});
    receiver.on('message.delivered', async () => {});
    receiver.on('message.failed', () => {
      throw new Error('boom');
    });
    for (let i = 0; i < 3; i++) {
      expect((await receiver.handle(signed('message.delivered'))).status).toBe(200);
      expect((await receiver.handle(signed('message.failed'))).status).toBe(500);
      expect((await receiver.handle(signed('message.delivered', {}, 'whsec_forged'))).status).toBe(401);
    }
    await settle();
    expect(uncaught).not.toHaveBeenCalled();
    const lines = consoleError.mock.calls.map(([line]) => String(line));
    expect(lines).toEqual([
      "[@hookline/otel] recording a store operation failed: Error: histogram.record is broken. The delivery went on, untraced where it failed; further failures of it go to OpenTelemetry's diag logger only.",
      expect.stringContaining("[@hookline/otel] ending a delivery's span failed: Error: onEnd is broken."),
      expect.stringContaining("[@hookline/otel] recording a delivery's metrics failed: Error: histogram.record is broken."),
    ]);
  });

  it('in its sampler (no span can start): the answer unchanged, and a queue operation that cannot be recorded is no crash either', async () => {
    instrumentation = new HooklineInstrumentation({ enabled: false });
    instrumentation.setTracerProvider(
      new BasicTracerProvider({ sampler: { shouldSample: broken('shouldSample'), toString: () => 'broken' } }),
    );
    instrumentation.setMeterProvider(brokenMeters);
    instrumentation.enable();
    const queue: DeliveryQueue = {
      name: 'failing',
      enqueue: () => Promise.reject(new Error('queue down')),
      work: () => ({ close: async () => {} }),
      deadLetters: async () => [],
      replay: async () => false,
      replayAll: async () => 0,
      close: async () => {},
    };
    const receiver = createReceiver({ secret: SECRET, logger: false, queue });
    receiver.onError(() => {});
    receiver.on('*', () => {});
    const answer = await receiver.handle(signed('message.delivered'));
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).error.details).toEqual({ reason: 'queue_unavailable', queue: 'failing' });
    await settle();
    expect(uncaught).not.toHaveBeenCalled();
    expect(consoleError.mock.calls.map(([line]) => String(line).split(':')[0])).toEqual([
      "[@hookline/otel] starting a delivery's span failed",
      '[@hookline/otel] recording a queue operation failed',
    ]);
  });
});
