// What a tracer reads off the hookline:delivery and hookline:store channels for each outcome: the
// error event and `permanent` for failures, the refusal's reason, store messages with an error only
// when the operation failed.
import diagnostics from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { STORE_CHANNEL, type StoreOperationMessage } from './diagnostics';
import { PermanentFailure } from './errors';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, SECRET, signed, watchDeliveryTraces } from './test-support';

describe('hookline:delivery', () => {
  it('publishes error with the thrown value for a failed handler, without `permanent`', async () => {
    const traces = watchDeliveryTraces();
    const failure = new Error('boom');
    const receiver = createReceiver({ secret: SECRET })
      .onError(() => {})
      .on('*', () => {
        throw failure;
      });
    await receiver.handle(signed(envelope()));
    const errors = traces.seen.filter(([name]) => name === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.[1]).toMatchObject({ outcome: 'failed', status: 500, error: failure });
    expect(errors[0]?.[1]).not.toHaveProperty('permanent');
  });

  it('publishes error with permanent: true for a PermanentFailure (answered 200)', async () => {
    const traces = watchDeliveryTraces();
    const failure = new PermanentFailure('unknown message');
    const receiver = createReceiver({ secret: SECRET }).on('*', () => {
      throw failure;
    });
    await receiver.handle(signed(envelope()));
    const errors = traces.seen.filter(([name]) => name === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.[1]).toMatchObject({ outcome: 'failed', status: 200, permanent: true, error: failure });
  });

  it('publishes no error event for a handled or a refused delivery, and no `permanent`', async () => {
    const traces = watchDeliveryTraces();
    const receiver = createReceiver({ secret: SECRET, logger: false }).on('*', () => {});
    await receiver.handle(signed(envelope()));
    await receiver.handle(signed(envelope(), { secret: 'whsec_other' }));
    expect(traces.seen.map(([name]) => name)).not.toContain('error');
    const ends = traces.seen.filter(([name]) => name === 'asyncEnd').map(([, trace]) => trace);
    expect(ends.map((trace) => [trace.outcome, trace.status, 'permanent' in trace])).toEqual([
      ['handled', 200, false],
      ['rejected', 401, false],
    ]);
  });

  it("carries a refusal's details.reason when it has no issue (a store failure)", async () => {
    const traces = watchDeliveryTraces();
    const inner = memoryStore();
    const down: IdempotencyStore = {
      ...inner,
      claim: () => Promise.reject(new Error('down')),
      complete: inner.complete,
      release: inner.release,
      extend: inner.extend,
    };
    await createReceiver({ secret: SECRET, store: down })
      .onError(() => {})
      .on('*', () => {})
      .handle(signed(envelope()));
    const ends = traces.seen.filter(([name]) => name === 'asyncEnd').map(([, trace]) => trace);
    expect(ends[0]).toMatchObject({ outcome: 'rejected', status: 503, code: 'SERVICE_UNAVAILABLE', reason: 'store_unavailable' });
  });
});

describe('hookline:store', () => {
  it('sends an error only with the operations that failed, and times them without a delivery trace', async () => {
    const messages: StoreOperationMessage[] = [];
    const listener = (message: unknown) => void messages.push(message as StoreOperationMessage);
    diagnostics.subscribe(STORE_CHANNEL, listener);
    try {
      const inner = memoryStore();
      const failure = new Error('complete failed');
      const store: IdempotencyStore = {
        ...inner,
        claim: inner.claim,
        complete: () => Promise.reject(failure),
        release: inner.release,
        extend: inner.extend,
      };
      const body = envelope();
      await createReceiver({ secret: SECRET, store })
        .onError(() => {})
        .on('*', () => {})
        .handle(signed(body));
      expect(messages.map((m) => [m.operation, m.deliveryId, 'error' in m, m.error])).toEqual([
        ['claim', body.deliveryId, false, undefined],
        ['complete', body.deliveryId, true, failure],
      ]);
      expect(messages.every((m) => m.durationMs >= 0)).toBe(true);
    } finally {
      diagnostics.unsubscribe(STORE_CHANNEL, listener);
    }
  });

  it('publishes nothing once the listener is gone', async () => {
    const messages: unknown[] = [];
    const listener = (message: unknown) => void messages.push(message);
    diagnostics.subscribe(STORE_CHANNEL, listener);
    diagnostics.unsubscribe(STORE_CHANNEL, listener);
    await createReceiver({ secret: SECRET })
      .on('*', () => {})
      .handle(signed(envelope()));
    expect(messages).toEqual([]);
  });
});
