import { describe, expect, it } from 'vitest';
import { memoryStore } from './memory-store';
import { StoreDataError } from './store';

// The full contract is checked by the conformance suite (test/stores/); these are the memory store's own rules.
function clockStore(options: { maxEntries?: number; keepMs?: number } = {}) {
  const clock = { now: 1_000_000 };
  return { clock, store: memoryStore({ ...options, now: () => clock.now }) };
}

describe('memoryStore', () => {
  it('claims, reports in_progress with the lease left, completes and answers completed', async () => {
    const { clock, store } = clockStore();
    expect(await store.claim('k', 'a', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
    clock.now += 400;
    expect(await store.claim('k', 'b', 1_000)).toEqual({ state: 'in_progress', retryAfterMs: 600 });
    expect(await store.complete('k', 'a', 10_000)).toBe(true);
    expect(await store.claim('k', 'b', 1_000)).toEqual({ state: 'completed' });
  });

  it('keeps counting attempts across release and expiry, and forgets after retention', async () => {
    const { clock, store } = clockStore();
    await store.claim('k', 'a', 1_000);
    expect(await store.release('k', 'a')).toBe(true);
    expect(await store.claim('k', 'b', 1_000)).toEqual({ state: 'acquired', attempt: 2 });
    clock.now += 1_001;
    expect(await store.claim('k', 'c', 1_000)).toEqual({ state: 'acquired', attempt: 3 });
    expect(await store.complete('k', 'b', 5_000)).toBe(false);
    expect(await store.complete('k', 'c', 5_000)).toBe(true);
    clock.now += 6_000; // completions are kept in whole seconds, rounded so they never expire early
    expect(await store.claim('k', 'd', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });

  it('never lets release or extend touch a completed record', async () => {
    const { store } = clockStore();
    await store.claim('k', 'a', 1_000);
    await store.complete('k', 'a', 10_000);
    expect(await store.release('k', 'a')).toBe(false);
    expect(await store.extend('k', 'a', 1_000)).toBe(false);
    expect(await store.claim('k', 'b', 1_000)).toEqual({ state: 'completed' });
  });

  it('evicts the oldest completed records first when full, never a live lease', async () => {
    const { store } = clockStore({ maxEntries: 3 });
    await store.claim('live', 'a', 60_000);
    for (const key of ['done1', 'done2']) {
      await store.claim(key, 't', 60_000);
      await store.complete(key, 't', 60_000);
    }
    await store.claim('new', 't', 60_000); // evicts done1
    expect(store.size).toBe(3);
    expect(await store.claim('done2', 'x', 60_000)).toEqual({ state: 'completed' });
    expect(await store.claim('live', 'x', 60_000)).toMatchObject({ state: 'in_progress' });
    expect(await store.claim('done1', 'x', 60_000)).toEqual({ state: 'acquired', attempt: 1 }); // evicts done2
    expect(() => store.claim('done2', 'x', 60_000)).toThrow(/full/); // three live leases now
  });

  it('throws (the receiver answers 503) when every slot is a live lease', async () => {
    const { store } = clockStore({ maxEntries: 2 });
    await store.claim('a', 't', 60_000);
    await store.claim('b', 't', 60_000);
    expect(() => store.claim('c', 't', 60_000)).toThrow(/full/);
  });

  it('handles retentions past 2^31 ms', async () => {
    const { clock, store } = clockStore();
    await store.claim('k', 'a', 2 ** 32);
    expect(await store.complete('k', 'a', 2 ** 33)).toBe(true);
    clock.now += 2 ** 32;
    expect(await store.claim('k', 'b', 1_000)).toEqual({ state: 'completed' });
  });

  it('refuses a version that is not a finite number at once (it answers synchronously), keeping the record it had', () => {
    const { store } = clockStore();
    expect(store.advanceVersion('v', 3, 60_000)).toBe(true);
    for (const version of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '4', undefined]) {
      let thrown: unknown;
      try {
        store.advanceVersion('v', version as number, 60_000);
      } catch (error) {
        thrown = error;
      }
      // A data error (500), never recorded: a NaN would compare false with every later version.
      expect(StoreDataError.is(thrown), String(version)).toBe(true);
      expect((thrown as Error).message).toMatch(/^memoryStore: a version must be a finite number, got /);
      expect(store.readVersion('v')).toBe(3);
    }
    // The guard still works: lower refused, higher recorded.
    expect(store.advanceVersion('v', 2, 60_000)).toBe(false);
    expect(store.advanceVersion('v', 4, 60_000)).toBe(true);
  });

  it('refuses a bad maxEntries', () => {
    expect(() => memoryStore({ maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => memoryStore({ releasedTtlMs: 1 } as never)).toThrow(new TypeError('memoryStore: `releasedTtlMs` is now `keepMs`'));
  });
});
