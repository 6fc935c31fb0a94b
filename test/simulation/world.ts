/**
 * One seed's run: the scenario, the shared memory store (or a mutant of it), the receivers, the
 * service, and the driver that advances simulated time one timer at a time, lets every promise chain
 * that timer started finish, then checks the invariants: one step.
 */
import { memoryStore } from '@hookline/core';
import type { SimContext } from './context';
import { InvariantViolation, Invariants } from './invariants';
import { type Host, Ledger } from './ledger';
import { type ModeName, modeOf } from './modes';
import { sharedStore } from './mutants';
import { Prng } from './prng';
import { Receivers } from './receivers';
import { type PlannedDelivery, planScenario, type Scenario } from './scenario';
import { Service } from './service';
import { drainMicrotasks, installClock } from './sim-clock';
import { countFault, emptyStats, type SimStats } from './stats';
import { Trace } from './trace';

/** A run that has not settled after this many steps has a bug in the simulation itself. */
const MAX_STEPS = 500_000;
/** Crashes of the "right after a store call / a write" kind, at most, per run. */
const MAX_POINT_CRASHES = 2;

export interface RunOptions {
  /** A broken store between the memory store and the receivers (mutants.ts). */
  mutant?: string | undefined;
  /** Run the seed in this mode rather than its own (`seed % 3`). */
  mode?: ModeName | undefined;
}

export interface RunResult {
  readonly seed: number;
  readonly mutant: string | undefined;
  readonly scenario: Scenario;
  readonly stats: SimStats;
  readonly trace: Trace;
  readonly violation: InvariantViolation | undefined;
}

class World implements SimContext {
  readonly random: Prng;
  readonly ledger = new Ledger();
  readonly stats = emptyStats();
  readonly trace = new Trace();
  readonly invariants: Invariants;
  readonly receivers: Receivers;
  readonly service: Service;
  private readonly deliveries: Map<string, PlannedDelivery>;
  private pointCrashes = 0;

  constructor(
    readonly scenario: Scenario,
    mutant: string | undefined,
  ) {
    this.random = new Prng(scenario.seed, 1);
    this.invariants = new Invariants(scenario, this.ledger, this.stats, this.trace);
    this.deliveries = new Map(scenario.deliveries.map((delivery) => [delivery.id, delivery]));
    this.receivers = new Receivers(this, sharedStore(memoryStore(), mutant));
    this.service = new Service(this, this.receivers);
  }

  delivery(id: string): PlannedDelivery {
    const delivery = this.deliveries.get(id);
    if (delivery === undefined) throw new Error(`no planned delivery ${id}`);
    return delivery;
  }

  crash(host: Host, why: string): void {
    const incarnation = this.receivers.slots.find((slot) => slot === host);
    if (incarnation === undefined || incarnation.crashed) return;
    countFault(this.stats, 'crash');
    this.receivers.crash(incarnation, why, this.random.int(0, 60_000));
  }

  mayCrashNow(probability: number): boolean {
    if (this.pointCrashes >= MAX_POINT_CRASHES || !this.random.chance(probability)) return false;
    this.pointCrashes += 1;
    return true;
  }

  /** Whether nothing is left to happen: every series of attempts ended, no handler runs, no process is paused. */
  private get settled(): boolean {
    return this.service.idle && this.ledger.active.size === 0 && !this.receivers.anyPaused;
  }

  async run(clock: ReturnType<typeof installClock>): Promise<void> {
    const { scenario } = this;
    this.trace.add('world', describeScenario(scenario));
    this.service.start();
    for (const crash of scenario.crashes) {
      setTimeout(() => {
        const host = this.receivers.slots[crash.slot];
        if (host === undefined || host.crashed) return;
        countFault(this.stats, 'crash');
        this.receivers.crash(host, 'at a random moment', crash.restartAfterMs);
      }, crash.at);
    }
    for (const pause of scenario.pauses) {
      setTimeout(() => {
        if (this.receivers.pause(pause.slot, pause.durationMs)) countFault(this.stats, 'pause');
      }, pause.at);
    }
    while (this.invariants.violation === undefined) {
      clock.next();
      await drainMicrotasks();
      this.trace.steps += 1;
      this.invariants.step();
      if (this.settled) break;
      if (this.trace.steps >= MAX_STEPS) throw new Error(`seed ${scenario.seed}: the run did not settle within ${MAX_STEPS} steps`);
    }
    if (this.invariants.violation === undefined) this.invariants.end();
    this.stats.seeds = 1;
    this.stats.deliveries = scenario.deliveries.length;
    this.stats.steps = this.trace.steps;
    if (this.invariants.violation === undefined) {
      this.stats.abandoned = scenario.deliveries.filter((delivery) => !this.ledger.answered2xx.has(delivery.id)).length;
    }
    this.trace.add('world', this.invariants.violation === undefined ? 'ends: every invariant held' : 'stops at the violation');
  }
}

/** Runs one seed with the clock faked and Math.random drawn from the seed, and restores both. */
export async function runSeed(seed: number, options: RunOptions = {}): Promise<RunResult> {
  const scenario = planScenario(seed, options.mode ?? modeOf(seed));
  const jitter = new Prng(seed, 2);
  const random = Math.random;
  const clock = installClock();
  // Core draws jitter from Math.random (answer-fast mode's retry delays): the seed's own stream keeps it replayable.
  Math.random = () => jitter.next();
  try {
    const world = new World(scenario, options.mutant);
    await world.run(clock);
    return { seed, mutant: options.mutant, scenario, stats: world.stats, trace: world.trace, violation: world.invariants.violation };
  } finally {
    Math.random = random;
    clock.uninstall();
  }
}

export function describeScenario(scenario: Scenario): string {
  const handlers = scenario.handlers.map((spec) => (spec.guarded ? `${spec.name} (ordered)` : spec.name)).join(', ');
  return [
    `seed ${scenario.seed}: mode ${scenario.mode}, completion '${scenario.completion}', ${scenario.receivers} receivers`,
    `handlers ${handlers}`,
    `leaseMs ${scenario.leaseMs}, maxRunMs ${scenario.maxRunMs}`,
    `${scenario.deliveries.length} deliveries`,
    scenario.outage === undefined
      ? 'no outage'
      : `an outage of ${scenario.outage.resource} until ${Math.round(scenario.outage.untilMs / 60_000)} min`,
  ].join('; ');
}

export { InvariantViolation };
