/**
 * Broken stores, to prove the checker can fail: `SIM_MUTANT=<name>` puts one between the shared memory
 * store and every receiver, and the simulation must then find a violation. To add one, add an entry:
 * what it breaks, which invariants should catch it, and the wrapper.
 */
import type { MemoryStore } from '@hookline/core';
import type { SharedStore } from './fault-store';

export interface Mutant {
  /** What is broken, as the test names it. */
  readonly description: string;
  /** The invariants expected to catch it (any one will do). */
  readonly caughtBy: readonly string[];
  readonly wrap: (store: SharedStore) => SharedStore;
}

export const MUTANTS: Record<string, Mutant> = {
  'extend-noop': {
    description: 'extend answers true without extending the lease',
    caughtBy: ['delivery-runs-concurrently', 'succeeded-handler-rerun'],
    wrap: (store) => ({ ...bind(store), extend: () => true }),
  },
  'claim-ignores-lease': {
    description: 'claim takes a key whose lease is still live',
    caughtBy: ['delivery-runs-concurrently', 'succeeded-handler-rerun'],
    wrap: (store) => ({
      ...bind(store),
      claim: (key, token, leaseMs) => {
        const result = store.claim(key, token, leaseMs);
        return result.state === 'in_progress' ? { state: 'acquired', attempt: 1 } : result;
      },
    }),
  },
  'complete-noop': {
    description: 'complete answers true without recording the completion',
    caughtBy: ['succeeded-handler-rerun'],
    wrap: (store) => ({ ...bind(store), complete: () => true }),
  },
};

/** The shared store for a run: the memory store itself, or the named mutant of it. */
export function sharedStore(store: MemoryStore, mutant: string | undefined): SharedStore {
  if (mutant === undefined) return store;
  const entry = MUTANTS[mutant];
  if (entry === undefined) throw new Error(`SIM_MUTANT=${mutant} is not a mutant; use one of ${Object.keys(MUTANTS).join(', ')}`);
  return entry.wrap(store);
}

function bind(store: SharedStore): SharedStore {
  return {
    claim: (key, token, leaseMs) => store.claim(key, token, leaseMs),
    complete: (key, token, retentionMs) => store.complete(key, token, retentionMs),
    release: (key, token) => store.release(key, token),
    extend: (key, token, leaseMs) => store.extend(key, token, leaseMs),
    readVersion: (key) => store.readVersion(key),
    advanceVersion: (key, version, retentionMs) => store.advanceVersion(key, version, retentionMs),
  };
}
