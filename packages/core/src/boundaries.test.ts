// Every limit at its exact value: the replay window and the future skew, the body size, the deadline,
// the memory store's lease expiry, and the timestamp parser's digits and ranges.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseTimestamp } from './envelope';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import { envelope, json, signed, SECRET } from './test-support';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0, 0);
const HOUR = 3_600_000;

describe('the replay window and the future skew, to the millisecond', () => {
  const receiver = createReceiver({ secret: SECRET, now: () => NOW, maxAgeMs: 40 * HOUR, maxFutureSkewMs: 120_000, logger: false });
  receiver.on('message.delivered', () => {});
  const at = (ms: number) => signed(envelope({ timestamp: new Date(ms).toISOString() }));

  it('accepts a timestamp exactly maxAgeMs old and refuses one a millisecond older', async () => {
    expect((await receiver.handle(at(NOW - 40 * HOUR))).status).toBe(200);
    const old = await receiver.handle(at(NOW - 40 * HOUR - 1));
    expect(old.status).toBe(400);
    expect(json(old).error?.details).toEqual({ field: 'timestamp', issue: 'too_old' });
  });

  it('accepts a timestamp exactly maxFutureSkewMs ahead and refuses one a millisecond further', async () => {
    expect((await receiver.handle(at(NOW + 120_000))).status).toBe(200);
    const ahead = await receiver.handle(at(NOW + 120_001));
    expect(ahead.status).toBe(400);
    expect(json(ahead).error?.details).toEqual({ field: 'timestamp', issue: 'in_future' });
  });

  it('names the limit it applied in the message', async () => {
    expect(json(await receiver.handle(at(NOW - 41 * HOUR))).error?.message).toContain(`${40 * HOUR} ms`);
    expect(json(await receiver.handle(at(NOW + HOUR))).error?.message).toContain('120000 ms in the future');
  });
});

describe('maxBodyBytes', () => {
  /** A signed delivery of exactly `size` bytes (the JSON padded with spaces, which the signature covers). */
  function ofSize(size: number) {
    const text = JSON.stringify(envelope());
    return signed(text + ' '.repeat(size - Buffer.byteLength(text)));
  }

  it('accepts a body of exactly maxBodyBytes and refuses one byte more with 413', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 2_048, logger: false });
    receiver.on('message.delivered', () => {});
    expect((await receiver.handle(ofSize(2_048))).status).toBe(200);
    const over = await receiver.handle(ofSize(2_049));
    expect(over.status).toBe(413);
    expect(json(over).error?.details).toEqual({ limit: 2_048 });
  });

  it('streams a body of exactly maxBodyBytes through fetch, with and without Content-Length', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 2_048, logger: false });
    receiver.on('message.delivered', () => {});
    for (const declared of [true, false]) {
      for (const [size, status] of [
        [2_048, 200],
        [2_049, 413],
      ] as const) {
        const input = ofSize(size);
        const bytes = input.body;
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes.subarray(0, 1_000));
            controller.enqueue(bytes.subarray(1_000));
            controller.close();
          },
        });
        const headers = new Headers(input.headers as Record<string, string>);
        if (declared) headers.set('content-length', String(bytes.byteLength));
        const response = await receiver.fetch(
          new Request('http://localhost/webhooks', { method: 'POST', body, headers, duplex: 'half' } as RequestInit),
        );
        expect(response.status, `${size} bytes, content-length ${declared}`).toBe(status);
      }
    }
  });
});

describe('the deadline', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers 503 exactly at deadlineMs, not a millisecond before, while the handler goes on', async () => {
    vi.useFakeTimers();
    const receiver = createReceiver({ secret: SECRET, deadlineMs: 1_000 });
    let finish!: () => void;
    receiver.on('message.delivered', () => new Promise<void>((resolve) => (finish = resolve)));
    let answer: { status: number; body: string } | undefined;
    const input = signed(envelope());
    void receiver.handle(input).then((value) => {
      answer = value;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answer?.status).toBe(503);
    expect(json(answer as { body: string }).error?.details).toEqual({ reason: 'deadline' });
    finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
  });
});

describe('heartbeats and maxRunMs, on a fake clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A memory store that records when each lease renewal came, on the fake clock. */
  function renewalsStore() {
    const inner = memoryStore();
    const renewals: number[] = [];
    const started = Date.now();
    const store = {
      claim: inner.claim,
      complete: inner.complete,
      release: inner.release,
      extend: (key: string, token: string, leaseMs: number) => {
        renewals.push(Date.now() - started);
        return inner.extend(key, token, leaseMs);
      },
    };
    return { store, renewals };
  }

  it('renews the lease every leaseMs / 3 while the handler runs, and not after it finished', async () => {
    vi.useFakeTimers();
    const { store, renewals } = renewalsStore();
    const receiver = createReceiver({ secret: SECRET, store, leaseMs: 3_000 });
    let finish!: () => void;
    receiver.on('message.delivered', () => new Promise<void>((resolve) => (finish = resolve)));
    let answer: { status: number } | undefined;
    void receiver.handle(signed(envelope())).then((value) => {
      answer = value;
    });
    await vi.advanceTimersByTimeAsync(9_500);
    expect(renewals).toEqual([1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000]);
    finish();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(answer?.status).toBe(200);
    expect(renewals).toHaveLength(9);
  });

  it('renews past the deadline, until maxRunMs exactly, then stops and reports the overrun once', async () => {
    vi.useFakeTimers();
    const { store, renewals } = renewalsStore();
    const receiver = createReceiver({ secret: SECRET, store, leaseMs: 3_000, deadlineMs: 2_500, maxRunMs: 6_000 });
    const reports: [string, string][] = [];
    receiver.onError((error, info) => {
      reports.push([(error as Error).message, info.phase]);
    });
    const failed: boolean[] = [];
    receiver.hook('failed', ({ permanent }) => {
      failed.push(permanent);
    });
    receiver.on('message.delivered', () => new Promise<void>(() => {}));
    let answer: { status: number } | undefined;
    const body = envelope();
    void receiver.handle(signed(body)).then((value) => {
      answer = value;
    });
    await vi.advanceTimersByTimeAsync(2_499);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answer?.status).toBe(503);
    await vi.advanceTimersByTimeAsync(3_499);
    expect(renewals).toEqual([1_000, 2_000, 3_000, 4_000, 5_000]);
    expect(reports).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(reports).toEqual([
      [
        `hookline: the handlers of ${body.deliveryId} ran past maxRunMs (6000 ms); its lease is no longer renewed, so the next attempt may run it again`,
        'handler',
      ],
    ]);
    expect(failed).toEqual([false]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(renewals).toHaveLength(5);
    expect(reports).toHaveLength(1);
  });
});

describe('the memory store at the instant a lease expires', () => {
  function clockStore(options: { maxEntries?: number } = {}) {
    const clock = { now: 5_000_000 };
    return { clock, store: memoryStore({ ...options, now: () => clock.now }) };
  }

  it('reports in_progress until the last millisecond of a lease, and lets a new claim take it over at expiresAt', () => {
    const { clock, store } = clockStore();
    store.claim('k', 'a', 1_000);
    clock.now += 999;
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'in_progress', retryAfterMs: 1 });
    clock.now += 1;
    expect(store.claim('k', 'c', 1_000)).toEqual({ state: 'acquired', attempt: 2 });
    // The lease now belongs to c alone.
    expect(store.extend('k', 'a', 1_000)).toBe(false);
    expect(store.complete('k', 'a', 10_000)).toBe(false);
    expect(store.release('k', 'a')).toBe(false);
    expect(store.complete('k', 'c', 10_000)).toBe(true);
  });

  it('an extended lease lasts leaseMs from the extension', () => {
    const { clock, store } = clockStore();
    store.claim('k', 'a', 1_000);
    clock.now += 800;
    expect(store.extend('k', 'a', 1_000)).toBe(true);
    clock.now += 999;
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'in_progress', retryAfterMs: 1 });
    clock.now += 1;
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'acquired', attempt: 2 });
  });

  it('a lapsed lease nobody took over is still its owner’s to complete', () => {
    const { clock, store } = clockStore();
    store.claim('k', 'a', 1_000);
    clock.now += 5_000;
    expect(store.complete('k', 'a', 10_000)).toBe(true);
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'completed' });
  });

  it('when full, evicts a lease that expired at this very instant, so a store of dead leases never refuses for ever', () => {
    const { clock, store } = clockStore({ maxEntries: 2 });
    store.claim('a', 't', 1_000);
    store.claim('b', 't', 2_000);
    clock.now += 999;
    expect(() => store.claim('c', 't', 1_000)).toThrow(/memoryStore is full: 2 deliveries are in progress \(maxEntries 2\)/);
    clock.now += 1;
    expect(store.claim('c', 't', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
    expect(store.size).toBe(2);
    expect(store.claim('b', 'u', 1_000)).toEqual({ state: 'in_progress', retryAfterMs: 1_000 });
    clock.now += 1_000;
    expect(store.claim('a', 'u', 1_000)).toEqual({ state: 'acquired', attempt: 1 }); // a was evicted; b expired now and makes room
  });

  it('evicts released records when full, and keeps what it did not need to evict', () => {
    const { store } = clockStore({ maxEntries: 2 });
    store.claim('a', 't', 60_000);
    store.release('a', 't');
    store.claim('b', 't', 60_000);
    expect(store.claim('c', 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
    expect(store.claim('b', 'u', 60_000)).toMatchObject({ state: 'in_progress' });
    expect(store.size).toBe(2);
  });

  it('forgets a completion exactly at the end of its retention (whole seconds), never before', () => {
    const { clock, store } = clockStore();
    store.claim('k', 'a', 1_000);
    store.complete('k', 'a', 10_000);
    clock.now += 9_999;
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'completed' });
    clock.now += 1;
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });

  it('rounds a retention that ends mid-second up to the next second', () => {
    const { clock, store } = clockStore();
    clock.now += 500;
    store.claim('k', 'a', 1_000);
    store.complete('k', 'a', 1_000); // ends at 1.5 s after the store was made: kept until 2 s
    clock.now += 1_499;
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'completed' });
    clock.now += 1;
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });
});

describe('parseTimestamp, character by character', () => {
  const good = '2026-11-22T07:58:15.267Z';
  const digitPositions = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];

  it('refuses the service form with any digit replaced by the characters on either side of 0-9', () => {
    expect(parseTimestamp(good)).toBe(Date.UTC(2026, 10, 22, 7, 58, 15, 267));
    for (const at of digitPositions) {
      for (const replacement of ['/', ':']) {
        const bad = good.slice(0, at) + replacement + good.slice(at + 1);
        expect(parseTimestamp(bad), bad).toBeNaN();
      }
    }
  });

  it('refuses "0:" where two digits belong (it is not read as 10)', () => {
    expect(parseTimestamp('2026-11-22T0::58:15.267Z')).toBeNaN();
    expect(parseTimestamp('2026-0:-22T07:58:15.267Z')).toBeNaN();
  });

  it('refuses out-of-range fields instead of rolling them over', () => {
    for (const bad of [
      '2026-11-22T07:60:15.267Z',
      '2026-11-22T07:58:60.267Z',
      '2026-00-22T07:58:15.267Z',
      '2026-13-22T07:58:15.267Z',
      '2026-11-00T07:58:15.267Z',
      '2026-11-31T07:58:15.267Z',
      '2026-12-32T07:58:15.267Z',
    ]) {
      expect(parseTimestamp(bad), bad).toBeNaN();
    }
  });

  it('reads the last valid value of every field', () => {
    expect(parseTimestamp('2026-12-31T23:59:59.999Z')).toBe(Date.UTC(2026, 11, 31, 23, 59, 59, 999));
    expect(parseTimestamp('2026-01-01T00:00:00.000Z')).toBe(Date.UTC(2026, 0, 1));
    expect(parseTimestamp('2026-11-30T12:00:00.000Z')).toBe(Date.UTC(2026, 10, 30, 12));
  });

  it('reads hour 24 as the general ISO 8601 path does (midnight of the next day), never as an hour of the same day', () => {
    expect(parseTimestamp('2026-11-22T24:00:00.000Z')).toBe(Date.parse('2026-11-22T24:00:00.000Z'));
    expect(parseTimestamp('2026-11-22T24:30:00.000Z')).toBeNaN();
  });

  it('requires the separators of the service form, or falls back to the general form', () => {
    expect(parseTimestamp('2026-11-22T07:58:15.267+00:00')).toBe(Date.UTC(2026, 10, 22, 7, 58, 15, 267));
    for (const [at, replacement] of [
      [4, '/'],
      [7, '/'],
      [10, ' '],
      [13, '.'],
      [16, '.'],
      [19, ','],
      [23, 'z'],
    ] as const) {
      const bad = good.slice(0, at) + replacement + good.slice(at + 1);
      expect(parseTimestamp(bad), bad).toBeNaN();
    }
  });
});

describe('parseTimestamp and parseEnvelope, beyond the service form', () => {
  it('refuses the service form with anything after it', () => {
    expect(parseTimestamp('2026-11-22T07:58:15.267Zx')).toBeNaN();
    expect(parseTimestamp('2026-11-22T07:58:15.267Z ')).toBeNaN();
  });

  it('refuses a body that is a JSON number, string or null as not an object', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    for (const body of ['5', '"text"', 'null', 'true']) {
      expect(json(await receiver.handle(signed(body))).error?.details, body).toEqual({ field: 'body', issue: 'not_an_object' });
    }
  });
});

describe('the memory store, at the edges of its options', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('works with a single entry', () => {
    const store = memoryStore({ maxEntries: 1 });
    expect(store.claim('a', 't', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
    expect(() => memoryStore({ maxEntries: 1.5 })).toThrow('memoryStore: maxEntries must be a positive integer, got 1.5');
  });

  it('answers false for a key it never held, without throwing', () => {
    const store = memoryStore();
    expect(store.complete('never', 't', 1_000)).toBe(false);
    expect(store.release('never', 't')).toBe(false);
    expect(store.extend('never', 't', 1_000)).toBe(false);
  });

  it('drops a released record at exactly keepMs', () => {
    vi.useFakeTimers();
    const store = memoryStore({ keepMs: 60_000 });
    store.claim('k', 'a', 1_000);
    store.release('k', 'a');
    vi.advanceTimersByTime(60_000); // the sweep runs at this very instant
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });
});
