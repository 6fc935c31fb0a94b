// What a failed store call is answered with (store-failure.ts), from the claim and from an ordering
// guard's store calls alike: a store that is not set up is a configuration error (500, said once), a
// key it refused is a data error (500), anything else an outage (503).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from './memory-store';
import { queueJobEntry } from './receiver-entry';
import { createReceiver } from './receiver';
import { type IdempotencyStore, StoreDataError, StoreNotSetUpError } from './store';
import { envelope, json, SECRET, signed } from './test-support';

const notSetUp = () =>
  new StoreNotSetUpError('testStore: the table "deliveries" does not exist. Run `await store.setup()` once at start-up.');

/** The memory store with some calls replaced. */
function storeWith(overrides: Partial<IdempotencyStore>): IdempotencyStore {
  const inner = memoryStore();
  return {
    claim: (key, token, leaseMs) => inner.claim(key, token, leaseMs),
    complete: (key, token, retentionMs) => inner.complete(key, token, retentionMs),
    release: (key, token) => inner.release(key, token),
    extend: (key, token, leaseMs) => inner.extend(key, token, leaseMs),
    readVersion: (key) => inner.readVersion(key),
    advanceVersion: (key, version, retentionMs) => inner.advanceVersion(key, version, retentionMs),
    ...overrides,
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a store that is not set up', () => {
  it('is answered 500 CONFIGURATION_ERROR store_not_set_up with its message, written once to console.warn and never as an error', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createReceiver({ secret: SECRET, store: storeWith({ claim: () => Promise.reject(notSetUp()) }) });
    const rejected: unknown[] = [];
    receiver.hook('rejected', ({ code, details }) => void rejected.push([code, details]));
    let runs = 0;
    receiver.on('*', () => void runs++);
    for (let i = 0; i < 3; i++) {
      const answer = await receiver.handle(signed(envelope()));
      expect(answer.status).toBe(500);
      expect(json(answer).error).toEqual({
        code: 'CONFIGURATION_ERROR',
        message:
          'The idempotency store is not set up, so no delivery can be processed: testStore: the table "deliveries" does not exist. Run `await store.setup()` once at start-up.',
        details: { reason: 'store_not_set_up' },
      });
    }
    expect(runs).toBe(0);
    expect(rejected).toHaveLength(3);
    expect(error).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toContain('refused a request with 500 CONFIGURATION_ERROR (store_not_set_up)');
  });

  it('is handed to onError listeners (phase store) at once, then at most once a minute, and never logged at error level', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const logger = { warn: vi.fn(), error: vi.fn() };
      const heard: [unknown, unknown][] = [];
      const receiver = createReceiver({ secret: SECRET, logger, store: storeWith({ claim: () => Promise.reject(notSetUp()) }) }).onError(
        (error, info) => void heard.push([error, info]),
      );
      receiver.on('*', () => {});
      const first = envelope();
      await receiver.handle(signed(first));
      await receiver.handle(signed(envelope()));
      expect(heard).toHaveLength(1);
      expect(StoreNotSetUpError.is(heard[0]?.[0])).toBe(true);
      expect(String((heard[0]?.[0] as Error | undefined)?.message)).toContain('Run `await store.setup()`');
      expect(heard[0]?.[1]).toEqual({ phase: 'store', delivery: expect.objectContaining({ deliveryId: first.deliveryId }) });
      vi.setSystemTime(Date.now() + 59_000);
      await receiver.handle(signed(envelope()));
      expect(heard).toHaveLength(1);
      vi.setSystemTime(Date.now() + 2_000);
      await receiver.handle(signed(envelope()));
      expect(heard).toHaveLength(2);
      expect(logger.error).not.toHaveBeenCalled();
      expect(logger.warn.mock.calls.map(([fields]) => (fields as { details: unknown }).details)).toEqual(
        Array.from({ length: 4 }, () => ({ reason: 'store_not_set_up' })),
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('is heard by the onError listeners of a worker too, while the queue keeps the job', async () => {
    const heard: unknown[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      store: storeWith({ claim: () => Promise.reject(notSetUp()) }),
    }).onError((error, info) => void heard.push(info.phase, StoreNotSetUpError.is(error)));
    receiver.on('*', () => {});
    const job = { payload: { delivery: envelope(), receivedAt: Date.now(), secretIndex: 0 }, attempt: 1, maxAttempts: 3 };
    await queueJobEntry(receiver)
      ?.process(job)
      .catch(() => undefined);
    expect(heard).toEqual(['store', true]);
  });

  it("is answered the same from an ordering guard's store call (its version table missing): the handler does not run", async () => {
    const store = storeWith({ readVersion: () => Promise.reject(notSetUp()) });
    const receiver = createReceiver({ secret: SECRET, store, logger: false });
    const failed = vi.fn();
    receiver.hook('failed', failed);
    let runs = 0;
    receiver.on('message.delivered', () => void runs++, { name: 'status', order: { key: (d) => String(d.data.lineId) } });
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(500);
    expect(json(answer).error).toMatchObject({ code: 'CONFIGURATION_ERROR', details: { reason: 'store_not_set_up' } });
    expect(runs).toBe(0);
    expect(failed).not.toHaveBeenCalled();
  });
});

describe("an ordering guard's store call that fails otherwise", () => {
  it('is answered as the claim would be: 500 store_data_error for a refused key, 503 store_unavailable for an outage', async () => {
    for (const [thrown, status, reason] of [
      [new StoreDataError('testStore: the key is too long'), 500, 'store_data_error'],
      [new Error('connection reset'), 503, 'store_unavailable'],
    ] as const) {
      const receiver = createReceiver({ secret: SECRET, store: storeWith({ readVersion: () => Promise.reject(thrown) }), logger: false });
      const reported = vi.fn();
      receiver.onError(reported);
      receiver.on('message.delivered', () => {}, { name: 'status', order: { key: (d) => String(d.data.lineId) } });
      const answer = await receiver.handle(signed(envelope()));
      expect([answer.status, json(answer).error?.details]).toEqual([status, { reason }]);
      expect(reported).toHaveBeenCalledWith(thrown, expect.objectContaining({ phase: 'store' }));
    }
  });
});
