// The memory store's expiry over time: its periodic sweep, how long it keeps released records and
// completions, and the receiver's embedded default store over the service's retry schedule.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import { envelope, json, signed, SECRET } from './test-support';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the sweep (every minute)', () => {
  it('drops completions whose retention ended and keeps the others, which still answer completed', () => {
    const store = memoryStore();
    for (const [key, retentionMs] of [
      ['short', 30_000],
      ['long', 10 * MINUTE],
    ] as const) {
      store.claim(key, 't', 1_000);
      store.complete(key, 't', retentionMs);
    }
    expect(store.size).toBe(2);
    vi.advanceTimersByTime(MINUTE);
    expect(store.size).toBe(1);
    expect(store.claim('long', 'u', 1_000)).toEqual({ state: 'completed' });
    vi.advanceTimersByTime(10 * MINUTE);
    expect(store.size).toBe(0);
    expect(store.claim('long', 'u', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });

  it('drops a completion at the sweep that falls on the very second its retention ends', () => {
    const store = memoryStore();
    store.claim('k', 't', 1_000);
    store.complete('k', 't', MINUTE);
    vi.advanceTimersByTime(MINUTE);
    expect(store.size).toBe(0);
  });

  it('never drops a lease, even a lapsed one: its owner may still complete it', () => {
    const store = memoryStore();
    store.claim('lapsed', 'a', 1_000);
    store.claim('live', 'b', 10 * MINUTE);
    vi.advanceTimersByTime(3 * MINUTE);
    expect(store.size).toBe(2);
    expect(store.complete('lapsed', 'a', HOUR)).toBe(true);
    expect(store.claim('live', 'c', 1_000)).toMatchObject({ state: 'in_progress' });
  });

  it('keeps a released record for keepMs, so the attempt count goes on, then drops it', () => {
    const store = memoryStore({ keepMs: 5 * MINUTE });
    store.claim('k', 'a', 1_000);
    store.release('k', 'a');
    vi.advanceTimersByTime(4 * MINUTE);
    expect(store.size).toBe(1);
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'acquired', attempt: 2 });
    store.release('k', 'b');
    vi.advanceTimersByTime(6 * MINUTE);
    expect(store.size).toBe(0);
    expect(store.claim('k', 'c', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });

  it('keeps a released record 72 h by default: across the whole retry schedule', () => {
    const store = memoryStore();
    store.claim('k', 'a', 1_000);
    store.release('k', 'a');
    vi.advanceTimersByTime(71 * HOUR);
    expect(store.claim('k', 'b', 1_000)).toEqual({ state: 'acquired', attempt: 2 });
    store.release('k', 'b');
    vi.advanceTimersByTime(72 * HOUR + MINUTE);
    expect(store.size).toBe(0);
  });

  it('reads the clock it was given', () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now });
    store.claim('k', 't', 1_000);
    store.complete('k', 't', 30_000);
    vi.advanceTimersByTime(MINUTE); // the timer fires, but the store's own clock has not moved
    expect(store.size).toBe(1);
    now += 31_000;
    vi.advanceTimersByTime(MINUTE);
    expect(store.size).toBe(0);
  });

  it('forgets version records once their retention ended', () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now });
    expect(store.advanceVersion('v', 5, 10_000)).toBe(true);
    expect(store.advanceVersion('v', 5, 10_000)).toBe(false);
    expect(store.advanceVersion('v', 4, 10_000)).toBe(false);
    expect(store.readVersion('v')).toBe(5);
    now += 9_999;
    expect(store.readVersion('v')).toBe(5);
    now += 1;
    expect(store.readVersion('v')).toBeUndefined();
    expect(store.advanceVersion('v', 1, 10_000)).toBe(true);
    expect(store.readVersion('v')).toBe(1);
    store.clear();
    expect(store.readVersion('v')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('lets a new version through once the old one expired, even when it is lower', () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now });
    store.advanceVersion('v', 9, 1_000);
    now += 1_000;
    expect(store.advanceVersion('v', 3, 1_000)).toBe(true);
    expect(store.readVersion('v')).toBe(3);
  });
});

describe("the receiver's embedded default store", () => {
  it('remembers a completed delivery across the sweeps for the whole replay window', async () => {
    const receiver = createReceiver({ secret: SECRET });
    let runs = 0;
    receiver.on('message.delivered', () => {
      runs += 1;
    });
    const input = signed(envelope());
    expect(json(await receiver.handle(input))).toEqual({ ok: true });
    for (const hours of [1, 6, 24, 40]) {
      vi.advanceTimersByTime(hours * HOUR);
    }
    // 71 h later: the service's retries are long over, a replay is still recognised.
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('keeps counting attempts of a failing delivery across the retry schedule (31 h)', async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.onError(() => {});
    const attempts: number[] = [];
    receiver.on('message.delivered', (_delivery, { attempt }) => {
      attempts.push(attempt);
      if (attempts.length < 7) throw new Error('still failing');
    });
    const input = signed(envelope());
    for (const waitMs of [0, 30_000, 2 * MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, 24 * HOUR]) {
      vi.advanceTimersByTime(waitMs);
      await receiver.handle(input);
    }
    expect(attempts).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});
