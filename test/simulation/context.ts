import type { Invariants } from './invariants';
import type { JobLedger } from './job-ledger';
import type { Host, Ledger } from './ledger';
import type { Prng } from './prng';
import type { PlannedDelivery, Scenario } from './scenario';
import type { SimStats } from './stats';
import type { Trace } from './trace';

/** The store keys' prefix (createReceiver's default namespace). */
export const NAMESPACE = 'hookline:';

/** The signing secret every receiver is configured with. */
export const SECRET = 'whsec_simulation_3f8a';

/** What every part of the world (store wrappers, handlers, receivers, the service) shares. */
export interface SimContext {
  readonly scenario: Scenario;
  /** Draws made as the run goes (faults, latencies, durations): the seed's second stream. */
  readonly random: Prng;
  readonly ledger: Ledger;
  /** Answer-fast mode: what the queue did with each job (empty in the synchronous modes). */
  readonly jobs: JobLedger;
  readonly invariants: Invariants;
  readonly stats: SimStats;
  readonly trace: Trace;
  /** A delivery of the scenario by its id. */
  delivery(id: string): PlannedDelivery;
  /** Crashes the receiver `host` (its memory is gone, its leases lapse in their own time); a restart follows. */
  crash(host: Host, why: string): void;
  /** Whether one more crash of the "right after …" kind may be injected in this run. */
  mayCrashNow(probability: number): boolean;
}
