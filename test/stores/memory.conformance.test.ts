import { memoryStore } from '@hookline/core';
import { describeStoreConformance } from '@hookline/testing/conformance';
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

// The real clock too, as a user gets it. The short retentions and leases are long enough that a timer
// running late on a busy CI machine cannot carry a "still there at half of it" check past its end:
// at 60 ms a 30 ms wait that fired after 60 ms failed one run of CI.
describeStoreConformance('memoryStore (Date.now)', () => ({ store: memoryStore() }), {
  shortMs: 300,
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
