/**
 * What the checks beside `Invariants` (store-invariants.ts, end-invariants.ts) judge a run with: the
 * run's scenario, ledger, statistics and trace, taken from the one `Invariants` whose first violation
 * they record.
 */
import type { Invariants } from './invariants';
import type { Ledger } from './ledger';
import type { Scenario } from './scenario';
import type { SimStats } from './stats';
import type { Trace } from './trace';

export abstract class JudgedRun {
  protected readonly scenario: Scenario;
  protected readonly ledger: Ledger;
  protected readonly stats: SimStats;
  protected readonly trace: Trace;

  constructor(protected readonly checks: Invariants) {
    ({ scenario: this.scenario, ledger: this.ledger, stats: this.stats, trace: this.trace } = checks);
  }

  protected fail(invariant: string, message: string): void {
    this.checks.fail(invariant, message);
  }
}
