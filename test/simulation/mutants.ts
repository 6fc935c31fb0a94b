/**
 * Broken stores and queues, to prove the checker can fail: `SIM_MUTANT=<name>` puts one between the
 * shared memory store (or queue) and every receiver, and the simulation must then find a violation.
 * To add one, add an entry: what it breaks, the modes it is tried in, which invariants should catch
 * it, and the wrapper.
 */
import type { MemoryStore } from '@hookline/core';
import type { DeliveryQueue, JobResult, QueueJob } from '@hookline/core/adapter';
import type { MemoryQueue } from '@hookline/testing';
import type { SharedStore } from './fault-store';
import type { ModeName } from './modes';

export interface Mutant {
  /** What is broken, as the test names it. */
  readonly description: string;
  /** The modes the test tries it in: where its damage, and nothing else, is what a violation shows. */
  readonly modes: readonly ModeName[];
  /** The invariants expected to catch it (any one will do). */
  readonly caughtBy: readonly string[];
  readonly wrap?: (store: SharedStore) => SharedStore;
  readonly wrapQueue?: (queue: MemoryQueue) => DeliveryQueue;
}

/** The plain synchronous modes: no ordering guard to catch a store mutant's damage in its own way. */
const PLAIN: readonly ModeName[] = ['delivery', 'handler'];

export const MUTANTS: Record<string, Mutant> = {
  'extend-noop': {
    description: 'extend answers true without extending the lease',
    modes: PLAIN,
    caughtBy: ['delivery-runs-concurrently', 'succeeded-handler-rerun'],
    wrap: (store) => ({ ...bind(store), extend: () => true }),
  },
  'claim-ignores-lease': {
    description: 'claim takes a key whose lease is still live',
    modes: PLAIN,
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
    modes: PLAIN,
    caughtBy: ['succeeded-handler-rerun'],
    wrap: (store) => ({ ...bind(store), complete: () => true }),
  },
  'wait-spends-try': {
    description: "the queue counts a worker's wait (a busy resource, a delivery held elsewhere) as a failed try",
    modes: ['answer-fast'],
    caughtBy: ['dead-letter-without-failure'],
    wrapQueue: (queue) => ({
      ...queue,
      work: (process, options) =>
        queue.work(async (job: QueueJob): Promise<JobResult> => {
          const result = await process(job);
          if (result.status === 'wait') throw new Error(result.reason);
          return result;
        }, options),
    }),
  },
  'enqueue-keeps-dead-letter': {
    description: 'enqueue of a dead-lettered delivery answers duplicate and leaves it dead',
    modes: ['answer-fast'],
    caughtBy: ['2xx-before-durably-enqueued', 'answered-delivery-lost'],
    wrapQueue: (queue) => ({
      ...queue,
      enqueue: (job) => (queue.job(job.delivery.deliveryId)?.state === 'dead' ? Promise.resolve({ duplicate: true }) : queue.enqueue(job)),
    }),
  },
};

function mutantNamed(mutant: string): Mutant {
  const entry = MUTANTS[mutant];
  if (entry === undefined) throw new Error(`SIM_MUTANT=${mutant} is not a mutant; use one of ${Object.keys(MUTANTS).join(', ')}`);
  return entry;
}

/** The shared store for a run: the memory store itself, or the named mutant of it. */
export function sharedStore(store: MemoryStore, mutant: string | undefined): SharedStore {
  if (mutant === undefined) return store;
  return mutantNamed(mutant).wrap?.(store) ?? store;
}

/** The shared queue for a run (answer-fast mode): the memory queue itself, or the named mutant of it. */
export function sharedQueue(queue: MemoryQueue, mutant: string | undefined): DeliveryQueue {
  if (mutant === undefined) return queue;
  return mutantNamed(mutant).wrapQueue?.(queue) ?? queue;
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
