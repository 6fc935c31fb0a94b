import { memoryStore } from '@hookline/core';
import { describeStoreConformance } from '@hookline/testing';
import { describe, expect, it } from 'vitest';

// An injected clock: the expiry tests advance it instead of sleeping.
describeStoreConformance(
  'memoryStore (fake clock)',
  () => {
    let now = Date.now();
    return {
      store: memoryStore({ now: () => now }),
      advance: (ms) => {
        now += ms;
      },
    };
  },
  { retentionResolutionMs: 1_000, inProcess: true, versions: true },
);

// The real clock too, as a user gets it.
describeStoreConformance('memoryStore (Date.now)', () => ({ store: memoryStore() }), {
  shortMs: 60,
  rounds: 5,
  retentionResolutionMs: 1_000, // completions are kept in whole seconds
  inProcess: true,
  versions: true,
});

describe('memoryStore: its own backend error', () => {
  it('throws on a claim when full of live leases, never answering a state (it answers synchronously)', () => {
    const store = memoryStore({ maxEntries: 2 });
    store.claim('a', 't1', 60_000);
    store.claim('b', 't2', 60_000);
    expect(() => store.claim('c', 't3', 60_000)).toThrow(/memoryStore is full/);
  });
});
