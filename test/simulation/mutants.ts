/**
 * Mutants, to prove the checker can fail and to measure how well: broken stores and queues (a wrapper
 * put between the shared memory store, or queue, and every receiver) and the receiver's own defects
 * (receiver-mutants.ts: core loaded with one snippet edited). `SIM_MUTANT=<name>` runs the simulation
 * with one; mutants.test.ts runs each over its modes' seeds and fails when the share of seeds that
 * catch it (with one of the invariants it names) falls under its floor.
 *
 * To add one: an entry with what it breaks, the modes it is tried in, the invariants expected to catch
 * it, its floor (set from a measured rate), and a `wrap(store)`, a `wrapQueue(queue)`, or an edit in
 * receiver-mutants.ts under the same name.
 */
import type { MemoryStore } from '@hookline/core';
import type { DeliveryQueue, JobResult, QueueJob } from '@hookline/core/adapter';
import type { MemoryQueue } from '@hookline/testing';
import type { SharedStore } from './fault-store';
import type { ModeName } from './modes';
import { isReceiverMutant } from './receiver-mutants';
import type { Scenario } from './scenario';

export interface Mutant {
  /** What is broken, as the test names it. */
  readonly description: string;
  /** The modes the test tries it in: where its damage, and nothing else, is what a violation shows. */
  readonly modes: readonly ModeName[];
  /** The invariants expected to catch it (any one will do). */
  readonly caughtBy: readonly string[];
  /** The share of its seeds (failing seeds / seeds) under which the test fails: set from the measured rate. */
  readonly floor: number;
  /** Why the floor is lower than 90 %, where it is. */
  readonly floorWhy?: string;
  /** Only seeds whose scenario can reach the defect are tried (an ordering guard, per-handler completion). */
  readonly reaches?: (scenario: Scenario) => boolean;
  readonly wrap?: (store: SharedStore) => SharedStore;
  readonly wrapQueue?: (queue: MemoryQueue) => DeliveryQueue;
}

/** The plain synchronous modes: no ordering guard to catch a store mutant's damage in its own way. */
const PLAIN: readonly ModeName[] = ['delivery', 'handler'];
/** The modes with ordering guards. */
const GUARDED: readonly ModeName[] = ['ordered', 'answer-fast'];
const SYNC: readonly ModeName[] = ['delivery', 'handler', 'ordered'];

const guarded = (scenario: Scenario) => scenario.handlers.some((spec) => spec.guarded);
const guardedWithRecords = (scenario: Scenario) => guarded(scenario) && scenario.completion === 'handler';
/** A guarded resource's burst whose first lock holder pauses past its lease after its write. */
const contended = (scenario: Scenario) => guarded(scenario) && scenario.contention !== undefined;
/** Jobs that meet at a guarded resource's lock. */
const colliding = (scenario: Scenario) => guarded(scenario) && scenario.burst;
/** A guarded handler's store connection may stall right after its write: its version advance hangs, and lands late. */
const stalling = (scenario: Scenario) => guarded(scenario) && scenario.rates.stallAfterWrite > 0;
/** Handlers that can fail (they throw, or an outage makes them). */
const failing = (scenario: Scenario) => scenario.rates.handlerThrow > 0 || scenario.outage !== undefined;
/** A handler's process may pause mid-run past its lease (handlers.ts): the handler fence's case. */
const pausingMidRun = (scenario: Scenario) => scenario.rates.pauseMidRun > 0;
/** An outage long enough for the queue to dead-letter jobs, which the service then replays. */
const deadLettering = (scenario: Scenario) => scenario.outage !== undefined;

export const MUTANTS: Record<string, Mutant> = {
  // The store.
  'extend-noop': {
    description: 'extend answers true without extending the lease',
    modes: PLAIN,
    caughtBy: ['lease-held-twice', 'delivery-runs-concurrently', 'succeeded-handler-rerun'],
    floor: 0.61,
    floorWhy:
      "Reached only when a delivery (or a handler's record) is claimed again more than leaseMs into a run, its lease alive only by the heartbeat's renewals: 66.5 % of its seeds (266 of 400), and every one of them catches it.",
    wrap: (store) => ({ ...bind(store), extend: () => true }),
  },
  'claim-ignores-lease': {
    description: 'claim takes a key whose lease is still live',
    modes: PLAIN,
    caughtBy: ['lease-held-twice', 'delivery-runs-concurrently', 'succeeded-handler-rerun'],
    floor: 0.84,
    floorWhy: 'Reached only where a claim meets a live lease: 87 % of its seeds, and every one of them catches it.',
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
    caughtBy: ['answered-delivery-not-completed', 'succeeded-handler-rerun', 'refused-while-nobody-holds'],
    floor: 0.95,
    wrap: (store) => ({ ...bind(store), complete: () => true }),
  },
  'release-keeps-lease': {
    description: 'release answers true and keeps the lease until it expires',
    modes: GUARDED,
    caughtBy: ['refused-while-nobody-holds'],
    floor: 0.9,
    wrap: (store) => ({ ...bind(store), release: () => true }),
  },
  'advance-no-compare': {
    description: 'advanceVersion records any version, older ones too (no compare-and-set)',
    modes: GUARDED,
    caughtBy: ['version-record-went-back', 'version-record-behind', 'older-version-overwrites-newer', 'last-state-not-newest'],
    floor: 0.55,
    floorWhy:
      "The compare-and-set acts only when an older version's advance lands after a newer one's (its holder paused past its lease, or its advance landed late): 60.3 % of the contended seeds, and every one that fails catches it. The contended holder pauses 3–6 leases, long enough for the newer versions to take the lock and advance meanwhile.",
    reaches: contended,
    wrap: (store) => {
      // The version records kept here, where an advance overwrites whatever is there.
      const versions = new Map<string, number>();
      return {
        ...bind(store),
        readVersion: (key) => versions.get(key),
        advanceVersion: (key, version) => {
          versions.set(key, version);
          return true;
        },
      };
    },
  },
  // The queue.
  'wait-spends-try': {
    description: "the queue counts a worker's wait (a busy resource, a delivery held elsewhere) as a failed try",
    modes: ['answer-fast'],
    caughtBy: ['try-spent-without-failure', 'dead-letter-without-failure'],
    floor: 0.93,
    reaches: colliding,
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
    floor: 0.9,
    reaches: deadLettering,
    wrapQueue: (queue) => ({
      ...queue,
      enqueue: (job) => (queue.job(job.delivery.deliveryId)?.state === 'dead' ? Promise.resolve({ duplicate: true }) : queue.enqueue(job)),
    }),
  },
  // The receiver (receiver-mutants.ts holds each edit).
  'heartbeat-skips-lock': {
    description: "the heartbeat renews the delivery's lease and the handlers' records, not the ordering locks",
    modes: GUARDED,
    caughtBy: ['lease-not-renewed', 'resource-runs-concurrently'],
    floor: 0.67,
    floorWhy:
      'A lock is renewed by a heartbeat in 88 % of its seeds (a guarded handler runs past a heartbeat period); 84 % of those catch it: in the others the renewal the mutant drops falls under a pause, or after the handler returned (a slow version advance), where no run is going on to lose its lock.',
    reaches: guarded,
  },
  'heartbeat-stops-at-deadline': {
    description: 'the heartbeat stops at the deadline (the 503), so a long handler loses its leases',
    modes: SYNC,
    caughtBy: ['lease-not-renewed', 'delivery-runs-concurrently', 'resource-runs-concurrently', 'succeeded-handler-rerun'],
    floor: 0.64,
    floorWhy:
      'A heartbeat renews a lease past the deadline in 73.5 % of its seeds (a handler runs past deadlineMs plus a heartbeat period); 87 % of those catch it: in the others that renewal falls under a pause or a store outage, which excuses the lapse.',
  },
  'deadline-ignored': {
    description: 'the receiver waits for its handlers past the deadline instead of answering 503 there',
    modes: SYNC,
    caughtBy: ['answer-past-deadline'],
    floor: 0.58,
    floorWhy:
      'Reached only where a handler runs past the deadline: 73.5 % of its seeds (a heartbeat renews a lease there); 86 % of those catch it, the others answer within the bound anyway (the handler ends soon after the deadline) or under a pause.',
  },
  'claim-in-progress-runs': {
    description: 'a claim that finds the delivery in progress runs its handlers anyway',
    modes: SYNC,
    caughtBy: ['run-without-lease', 'answered-delivery-not-completed', 'delivery-runs-concurrently', 'succeeded-handler-rerun'],
    floor: 0.72,
    floorWhy:
      "A delivery's claim finds it in progress in 87 % of its seeds; 84.5 % of those catch it: in the others the attempt that should have been refused runs no handler (its handlers' records were completed already) and completes nothing.",
  },
  'stale-check-skipped': {
    description: 'the ordering guard reads the version and runs an older delivery anyway',
    modes: GUARDED,
    caughtBy: ['older-version-overwrites-newer', 'last-state-not-newest', 'stale-skip-without-newer-state'],
    floor: 0.84,
    floorWhy:
      'Measured at 89.3 %: a guard skips a stale delivery in 94 % of its seeds, and 95.5 % of those catch it (in the others the older delivery it lets run overwrites no version completed cleanly: its handler fails, or the newer completion has not landed yet).',
    reaches: guarded,
  },
  'complete-before-advance': {
    description: "a guarded handler's record is completed before its version advance",
    modes: GUARDED,
    caughtBy: ['version-advanced-late', 'older-version-overwrites-newer', 'last-state-not-newest', 'version-record-behind'],
    floor: 0.95,
    reaches: guardedWithRecords,
  },
  'failed-advance-releases-lock': {
    description: 'after a failed version advance the lock is released at once, not left to lapse',
    modes: GUARDED,
    caughtBy: ['version-advanced-late', 'last-state-not-newest', 'older-version-overwrites-newer'],
    floor: 0.53,
    floorWhy:
      'Measured at 58.5 % of the seeds whose store connections stall (a fifth or two fifths of the guarded writes): the released lock does harm only when the release lands before either try of the advance, which a stall that heals before the release does not give, and when another delivery of the resource takes the lock before the late advance lands.',
    reaches: stalling,
  },
  'failure-completes-record': {
    description: 'a delivery whose handler failed is completed, not released',
    modes: SYNC,
    caughtBy: ['2xx-before-handlers-done', 'answered-delivery-not-handled', 'version-advanced-late'],
    floor: 0.73,
    floorWhy: 'A delivery released after a failure is claimed again in 82 % of the seeds whose handlers can fail; 96 % of those catch it.',
    reaches: failing,
  },
  'worker-wait-spends-try': {
    description: 'a worker answers a wait (a busy resource, a delivery held elsewhere) as a failed try',
    modes: ['answer-fast'],
    caughtBy: ['try-spent-without-failure', 'dead-letter-without-failure'],
    floor: 0.91,
    reaches: colliding,
  },
  'lease-loss-not-aborted': {
    description: "the heartbeat finds a lease gone and does not abort the handlers' signal",
    modes: ['answer-fast'],
    caughtBy: ['lease-lost-not-aborted'],
    floor: 0.25,
    floorWhy:
      "Reached only where the paused holder's lock is taken over by another process's worker while it is paused and a heartbeat after it finds the lock gone (61 of its 200 seeds, 30.5 %: in the others the jobs that wait for the lock are held by the paused process itself, or the other worker is down), and every one of them catches it. Synchronous modes cannot reach it: the deadline's 503 aborts the signal first, and the first reason stands.",
    reaches: (scenario) => scenario.midRunHolder !== undefined,
  },
  'signal-aborted-from-start': {
    description: "the handlers' signal is aborted as soon as a handler reads it, with no reason (an AbortError)",
    modes: ['delivery', 'answer-fast'],
    caughtBy: ['signal-aborted-without-cause'],
    floor: 0.95,
  },
  'fencing-token-not-passed': {
    description: 'the handlers get the same fencing token in every run (1), not the claim count',
    modes: ['delivery', 'handler'],
    caughtBy: ['stale-token-write'],
    floor: 0.32,
    floorWhy:
      "Reached only where a run paused mid-run resumes after the service's next attempt, sent to another receiver, took the delivery over and wrote (the clean runs' resource refuses a stale token in 150 of these 400 seeds, 37.5 %); with one token for every run that write lands, and every one of them catches it.",
    reaches: pausingMidRun,
  },
  'too-large-answered-early': {
    description: 'a delivery too large for the queue is answered 202 at once while the request goes on handling it',
    modes: ['answer-fast'],
    caughtBy: ['2xx-before-handlers-done', 'answered-delivery-not-handled'],
    floor: 0.95,
    reaches: (scenario) => (scenario.queue?.tooLarge.length ?? 0) > 0,
  },
};

export function mutantNamed(mutant: string): Mutant {
  const entry = MUTANTS[mutant];
  if (entry === undefined) throw new Error(`SIM_MUTANT=${mutant} is not a mutant; use one of ${Object.keys(MUTANTS).join(', ')}`);
  return entry;
}

/** The shared store for a run: the memory store itself, or the named mutant of it. */
export function sharedStore(store: MemoryStore, mutant: string | undefined): SharedStore {
  if (mutant === undefined) return store;
  return mutantNamed(mutant).wrap?.(store) ?? store;
}

/** Every receiver mutant has an entry here, and every entry without a wrapper is a receiver mutant. */
export function checkMutantTable(): void {
  for (const [name, entry] of Object.entries(MUTANTS)) {
    if (entry.wrap === undefined && entry.wrapQueue === undefined && !isReceiverMutant(name))
      throw new Error(`the mutant ${name} has no wrapper and no edit in receiver-mutants.ts`);
  }
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
