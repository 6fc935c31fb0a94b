/**
 * One seed's run: the scenario, the shared memory store (or a mutant of it), in answer-fast mode the
 * shared memory queue (or a mutant of it), the receivers, the service, and the driver that advances
 * simulated time one timer at a time, lets every promise chain that timer started finish, then checks
 * the invariants: one step.
 */
import * as realCore from '@hookline/core';
import { type MemoryQueue, memoryQueue } from '@hookline/testing';
import type { SimContext, SimCore } from './context';
import type { SharedStore } from './fault-store';
import { FencedResource } from './fenced-resource';
import { InvariantViolation, Invariants } from './invariants';
import { CORRUPT_JOB_ID, CORRUPT_JOB_TEXT, JobLedger } from './job-ledger';
import { type Host, Ledger } from './ledger';
import { type ModeName, modeOf } from './modes';
import { sharedQueue, sharedStore } from './mutants';
import { isReceiverMutant } from './receiver-mutants';
import { mutatedCoreSpecifier } from './source-mutants';
import { Prng } from './prng';
import { QueueInvariants } from './queue-invariants';
import { StoreInvariants } from './store-invariants';
import { Receivers } from './receivers';
import { type PlannedDelivery, planScenario, type Scenario, type StoreOutage } from './scenario';
import { Service } from './service';
import { drainMicrotasks, installClock, SIM_EPOCH } from './sim-clock';
import { countFault, emptyStats, type SimStats } from './stats';
import { Trace } from './trace';

/** A run that has not settled after this many steps has a bug in the simulation itself. */
const MAX_STEPS = 500_000;
/** Crashes of the "right after a store call / a write" kind, at most, per run. */
const MAX_POINT_CRASHES = 2;

export interface RunOptions {
  /** A broken store (or queue) between the memory store (or queue) and the receivers (mutants.ts). */
  mutant?: string | undefined;
  /** Run the seed in this mode rather than its own synchronous one (`seed % 3`). */
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
  readonly ledger: Ledger;
  readonly stats = emptyStats();
  readonly trace = new Trace();
  readonly invariants: Invariants;
  readonly fencedResource: FencedResource;
  readonly receivers: Receivers;
  readonly service: Service;
  /** Answer-fast mode: the queue every process shares, the durable server that outlives them. */
  readonly queue: MemoryQueue | undefined;
  readonly jobs: JobLedger;
  private readonly deliveries: Map<string, PlannedDelivery>;
  private pointCrashes = 0;
  private contentionTaken = false;
  private midRunHolderTaken = false;
  /** The store every receiver shares (the memory store, or a mutant of it): the end-of-run probes read it. */
  private readonly store: SharedStore;

  constructor(
    readonly scenario: Scenario,
    mutant: string | undefined,
    readonly core: SimCore,
  ) {
    this.store = sharedStore(core.memoryStore(), mutant);
    this.random = new Prng(scenario.seed, 1);
    this.ledger = new Ledger(scenario.leaseMs);
    this.invariants = new Invariants(scenario, this.ledger, this.stats, this.trace);
    this.fencedResource = new FencedResource((invariant, message) => this.invariants.fail(invariant, message));
    this.invariants.store = new StoreInvariants(this.invariants, this.store);
    this.deliveries = new Map(scenario.deliveries.map((delivery) => [delivery.id, delivery]));
    const setup = scenario.queue;
    this.queue =
      setup === undefined
        ? undefined
        : memoryQueue({
            attempts: setup.attempts,
            backoff: setup.backoff,
            stalledAfterMs: setup.stalledAfterMs,
            maxStalls: setup.maxStalls,
            ...(setup.maxJobBytes === undefined ? {} : { maxJobBytes: setup.maxJobBytes }),
          });
    this.jobs = new JobLedger(this.queue ?? memoryQueue());
    this.receivers = new Receivers(this, this.store, this.queue && sharedQueue(this.queue, mutant));
    this.service = new Service(this, this.receivers);
    if (setup !== undefined) {
      const checks = new QueueInvariants(scenario, setup, this.ledger, this.jobs, this.invariants, this.stats, this.trace);
      this.invariants.queue = checks;
      this.jobs.onEvent = (event) => {
        checks.event(event);
        if (event.kind === 'dead' && event.job.deliveryId !== undefined) this.service.deadLettered(event.job.deliveryId);
      };
    }
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

  storeOutage(host: Host): StoreOutage | undefined {
    const at = Date.now() - SIM_EPOCH;
    const slot = this.receivers.all.find((incarnation) => incarnation === host)?.slot;
    return this.scenario.storeOutages.find(
      (outage) => outage.at <= at && at < outage.at + outage.durationMs && (outage.slot === undefined || outage.slot === slot),
    );
  }

  pause(host: Host, durationMs: number, why: string, fault = 'pause-after-write'): void {
    const incarnation = this.receivers.slots.find((slot) => slot === host);
    if (incarnation === undefined || !this.receivers.pause(incarnation.slot, durationMs, why)) return;
    countFault(this.stats, fault);
  }

  stall(host: Host, durationMs: number, why: string): void {
    const incarnation = this.receivers.slots.find((slot) => slot === host);
    if (incarnation === undefined || incarnation.crashed) return;
    incarnation.stalledUntil = Date.now() + durationMs;
    countFault(this.stats, 'store-stall-after-write');
    this.trace.add(host.id, `its store connection STALLS for ${durationMs} ms ${why}`);
  }

  takeMidRunHolder(): boolean {
    if (this.midRunHolderTaken) return false;
    this.midRunHolderTaken = true;
    return true;
  }

  takeContention(): boolean {
    if (this.contentionTaken) return false;
    this.contentionTaken = true;
    return true;
  }

  mayCrashNow(probability: number): boolean {
    if (this.pointCrashes >= MAX_POINT_CRASHES || !this.random.chance(probability)) return false;
    this.pointCrashes += 1;
    return true;
  }

  /**
   * Whether nothing is left to happen: every series of attempts ended, no handler runs, no process is
   * paused, and the queue holds no job that is still to run (each is done or dead-lettered).
   */
  private get settled(): boolean {
    return this.service.idle && this.ledger.active.size === 0 && !this.receivers.anyPaused && this.queueSettled;
  }

  /** What is still going on, for a run that never settles. */
  private unsettled(): string {
    const jobs = (this.queue?.jobs() ?? []).filter((job) => job.state !== 'completed' && job.state !== 'dead');
    return [
      this.service.idle ? undefined : 'the service has attempts to make',
      this.ledger.active.size === 0 ? undefined : `${this.ledger.active.size} handler runs go on`,
      this.receivers.anyPaused ? 'a process is paused' : undefined,
      jobs.length === 0
        ? undefined
        : `jobs still to run: ${jobs.map((job) => `${job.id} (${job.state}, ${job.runs} hand-overs)`).join(', ')}`,
    ]
      .filter((part) => part !== undefined)
      .join('; ');
  }

  private get queueSettled(): boolean {
    return this.queue === undefined || this.queue.jobs().every((job) => job.state === 'completed' || job.state === 'dead');
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
    for (const outage of scenario.storeOutages) {
      setTimeout(() => {
        countFault(this.stats, `store-outage-${outage.kind}`);
        const who = outage.slot === undefined ? 'any receiver' : `slot ${String.fromCharCode(65 + outage.slot)}`;
        this.trace.add(
          'world',
          `the store cannot be reached by ${who} for ${outage.durationMs} ms (${outage.kind === 'refused' ? 'calls refused' : 'a partition: calls hang, and land when it heals or never'})`,
        );
      }, outage.at);
    }
    for (const pause of scenario.pauses) {
      setTimeout(() => {
        if (this.receivers.pause(pause.slot, pause.durationMs)) countFault(this.stats, 'pause');
      }, pause.at);
    }
    this.planQueueFaults();
    while (this.invariants.violation === undefined) {
      clock.next();
      await drainMicrotasks();
      this.trace.steps += 1;
      if (this.queue !== undefined) this.jobs.observe();
      this.invariants.step();
      if (this.settled) break;
      if (this.trace.steps >= MAX_STEPS) {
        // Something keeps going for ever (a job that waits and waits, a retry loop): the trace shows what.
        this.invariants.fail('run-never-settles', `the run did not settle within ${MAX_STEPS} steps: ${this.unsettled()}`);
      }
    }
    if (this.invariants.violation === undefined) this.invariants.end(this.store, this.receivers.all);
    this.stats.seeds = 1;
    this.stats.deliveries = scenario.deliveries.length;
    this.stats.steps = this.trace.steps;
    if (this.invariants.violation === undefined) {
      this.stats.abandoned = scenario.deliveries.filter((delivery) => !this.ledger.answered2xx.has(delivery.id)).length;
    }
    this.trace.add('world', this.invariants.violation === undefined ? 'ends: every invariant held' : 'stops at the violation');
  }

  /** Answer-fast mode: graceful shutdowns of workers, and the corrupt job. */
  private planQueueFaults(): void {
    const { queue } = this;
    const setup = this.scenario.queue;
    if (queue === undefined || setup === undefined) return;
    for (const shutdown of setup.shutdowns) {
      setTimeout(() => {
        if (this.receivers.shutDown(shutdown.slot, shutdown.exits, shutdown.restartAfterMs)) countFault(this.stats, 'worker-shutdown');
      }, shutdown.at);
    }
    if (setup.corruptJobAt !== undefined) {
      setTimeout(() => {
        countFault(this.stats, 'corrupt-job');
        this.trace.add('world', `puts a job in the queue that is not JSON (${CORRUPT_JOB_ID})`);
        queue.addRaw(CORRUPT_JOB_ID, CORRUPT_JOB_TEXT);
        this.jobs.observe();
      }, setup.corruptJobAt);
    }
  }
}

/** Runs one seed with the clock faked and Math.random drawn from the seed, and restores both. */
export async function runSeed(seed: number, options: RunOptions = {}): Promise<RunResult> {
  const scenario = planScenario(seed, options.mode ?? modeOf(seed));
  const core = await coreFor(options.mutant);
  const jitter = new Prng(seed, 2);
  const random = Math.random;
  const clock = installClock();
  // Core draws jitter from Math.random (answer-fast mode's retry delays): the seed's own stream keeps it replayable.
  Math.random = () => jitter.next();
  try {
    const world = new World(scenario, options.mutant, core);
    await world.run(clock);
    return { seed, mutant: options.mutant, scenario, stats: world.stats, trace: world.trace, violation: world.invariants.violation };
  } finally {
    Math.random = random;
    clock.uninstall();
  }
}

const mutatedCores = new Map<string, Promise<SimCore>>();

/** Core itself, or (for a receiver mutant) the copy of it with the mutant's edit made, loaded once. */
function coreFor(mutant: string | undefined): Promise<SimCore> {
  if (mutant === undefined || !isReceiverMutant(mutant)) return Promise.resolve(realCore);
  let loading = mutatedCores.get(mutant);
  if (loading === undefined) {
    loading = import(/* @vite-ignore */ mutatedCoreSpecifier(mutant)) as Promise<SimCore>;
    mutatedCores.set(mutant, loading);
  }
  return loading;
}

export function describeScenario(scenario: Scenario): string {
  const handlers = scenario.handlers.map((spec) => (spec.guarded ? `${spec.name} (ordered)` : spec.name)).join(', ');
  const { queue } = scenario;
  return [
    `seed ${scenario.seed}: mode ${scenario.mode}, completion '${scenario.completion}', ${scenario.receivers} receivers`,
    ...(queue === undefined
      ? []
      : [
          `roles ${queue.roles.map((role, slot) => (role === 'web' ? role : `${role} ×${queue.concurrency[slot]}`)).join(', ')}`,
          `queue: ${queue.attempts} tries, ${queue.backoff.type} backoff from ${queue.backoff.delayMs} ms, stalled after ${queue.stalledAfterMs} ms (${queue.maxStalls} times at most), closeTimeoutMs ${queue.closeTimeoutMs}`,
        ]),
    `handlers ${handlers}`,
    `leaseMs ${scenario.leaseMs}, maxRunMs ${scenario.maxRunMs}`,
    `${scenario.deliveries.length} deliveries`,
    scenario.outage === undefined
      ? 'no outage'
      : `an outage of ${scenario.outage.resource} until ${Math.round(scenario.outage.untilMs / 60_000)} min`,
  ].join('; ');
}

export { InvariantViolation };
