import type { createReceiver, memoryStore } from '@hookline/core';
import type { FencedResource } from './fenced-resource';
import type { Invariants } from './invariants';
import type { JobLedger } from './job-ledger';
import type { Host, Ledger } from './ledger';
import type { Prng } from './prng';
import type { PlannedDelivery, Scenario, StoreOutage } from './scenario';
import type { SimStats } from './stats';
import type { Trace } from './trace';

/** The store keys' prefix (createReceiver's default namespace). */
export const NAMESPACE = 'hookline:';

/** The signing secret every receiver is configured with. */
export const SECRET = 'whsec_simulation_3f8a';

/** What the world takes from core: the real one, or a copy with a receiver mutant in it (receiver-mutants.ts). */
export interface SimCore {
  readonly createReceiver: typeof createReceiver;
  readonly memoryStore: typeof memoryStore;
}

/** What every part of the world (store wrappers, handlers, receivers, the service) shares. */
export interface SimContext {
  readonly scenario: Scenario;
  readonly core: SimCore;
  /** Draws made as the run goes (faults, latencies, durations): the seed's second stream. */
  readonly random: Prng;
  readonly ledger: Ledger;
  /** Answer-fast mode: what the queue did with each job (empty in the synchronous modes). */
  readonly jobs: JobLedger;
  readonly invariants: Invariants;
  /** What the handlers write their effects to, fenced by their tokens. */
  readonly fencedResource: FencedResource;
  readonly stats: SimStats;
  readonly trace: Trace;
  /** A delivery of the scenario by its id. */
  delivery(id: string): PlannedDelivery;
  /** Crashes the receiver `host` (its memory is gone, its leases lapse in their own time); a restart follows. */
  crash(host: Host, why: string): void;
  /** The store outage `host` is cut off by now, if any. */
  storeOutage(host: Host): StoreOutage | undefined;
  /** Pauses the receiver `host` for `durationMs` (its leases may lapse meanwhile), counted as a fault of its own (`pause-after-write` unless named). */
  pause(host: Host, durationMs: number, why: string, fault?: string): void;
  /** Stalls the store connection of `host` for `durationMs`: each call on it hangs until then (or longer), or goes through. */
  stall(host: Host, durationMs: number, why: string): void;
  /** True once per run: the scenario's mid-run pause of a lock holder (`scenario.midRunHolder`) is for the caller to take. */
  takeMidRunHolder(): boolean;
  /** True once per run: the scenario's contention pause (`scenario.contention`) is for the caller to take. */
  takeContention(): boolean;
  /** Whether one more crash of the "right after …" kind may be injected in this run. */
  mayCrashNow(probability: number): boolean;
}
