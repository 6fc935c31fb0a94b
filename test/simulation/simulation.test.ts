// The deterministic simulation (README.md beside this file): real receivers over the real memory
// store (and, in answer-fast mode, the memory queue and workers), a simulated service, faults, and
// simulated time; every invariant checked at every step. mutants.test.ts measures how well it catches
// each mutant.
//
//   pnpm test:simulation                                    the CI seeds (600 per mode) and the mutants
//   SIM_SEEDS=100000 pnpm test:simulation                   more seeds
//   SIM_MODE=answer-fast pnpm test:simulation               one mode only
//   SIM_SEED=1234 pnpm test:simulation                      replay one seed, printing its whole trace
//   SIM_SEED=1234 SIM_MODE=answer-fast pnpm test:simulation replay one seed's answer-fast run
//   SIM_MUTANT=extend-noop pnpm test:simulation             run over a mutant (mutants.ts)
import { afterAll, describe, expect, it } from 'vitest';
import { type ModeName, modeOf } from './modes';
import { formatRun, listFailures, runSeeds, type SweepOptions, seedRange } from './run-seeds';
import { planScenario } from './scenario';
import { CI_SEEDS, modesToRun, simulationOptions } from './sim-options';
import { addStats, byKind, emptyStats, formatStats, type SimStats } from './stats';
import { VACUITY } from './vacuity';
import { runSeed } from './world';

/** Lines of a failing seed's trace printed in a sweep (a replay prints all of them). */
const TRACE_LINES = 150;

const { replaySeed, seedCount, mutant, onlyMode, stopAtFirst } = simulationOptions();
// Generous: a loaded CI machine may run far slower than the few milliseconds a seed takes.
const sweepTimeoutMs = Math.max(300_000, seedCount * 1_000);

/**
 * A sweep's seeds for one mode: `count` of them. A synchronous mode takes the seeds whose own mode it is
 * (`seed % 3`), so that a seed number keeps naming the run it always named; answer-fast mode runs them all.
 */
function sweepOf(mode: ModeName, count: number): { seeds: number[]; options: SweepOptions } {
  if (mode === 'answer-fast') return { seeds: seedRange(1, count), options: { mode } };
  return { seeds: seedRange(1, 3 * count), options: { only: (seed) => modeOf(seed) === mode } };
}

/**
 * The vacuity check: a clean sweep of the CI seeds injected each kind of fault, made each defence act
 * and used each excuse at least as often as its floor (vacuity.ts), or it proves nothing about them.
 * A longer sweep scales the floors up; a shorter one (a mutation run) only asks that what the CI seeds
 * saw ten times or more happened at all, since a few seeds are too few for a count to be stable.
 */
function floorFor(floor: number, seeds: number): number {
  const scaled = floor * (seeds / CI_SEEDS);
  if (seeds >= CI_SEEDS) return Math.floor(scaled);
  return scaled >= 5 ? 1 : 0;
}

function expectNotVacuous(mode: ModeName, stats: SimStats, seeds: number): void {
  const floors = VACUITY[mode];
  const excuses = byKind(stats.excuses);
  const short: string[] = [];
  for (const [group, counts] of [
    ['fault', stats.faults],
    ['defence', stats.defences],
    ['excuse', excuses],
    ['queue', stats.queue],
  ] as const) {
    for (const [kind, floor] of Object.entries(floors[group] ?? {})) {
      const count = counts[kind] ?? 0;
      if (count < floorFor(floor, seeds)) short.push(`${group} ${kind}: ${count} (floor ${floorFor(floor, seeds)})`);
    }
  }
  expect(short, `the ${mode} sweep is too calm to prove what it claims`).toEqual([]);
}

/** The ordering guard is run with both completions, `'handler'` and `'delivery'`, each in a fifth of the seeds or more. */
function expectBothCompletions(mode: ModeName, seeds: readonly number[]): void {
  const mine = seeds.filter((seed) => mode === 'answer-fast' || modeOf(seed) === mode);
  const delivery = mine.filter((seed) => planScenario(seed, mode).completion === 'delivery').length;
  expect(delivery, `${mode} mode: seeds with completion 'delivery'`).toBeGreaterThanOrEqual(mine.length / 5);
  expect(mine.length - delivery, `${mode} mode: seeds with completion 'handler'`).toBeGreaterThanOrEqual(mine.length / 5);
}

const total = emptyStats();
afterAll(() => {
  if (total.seeds > 0) console.log(`simulation summary: ${formatStats(total)}`);
});

if (replaySeed !== undefined) {
  it(`seed ${replaySeed} holds every invariant (replay${onlyMode === undefined ? '' : `, ${onlyMode} mode`})`, async () => {
    const result = await runSeed(replaySeed, { mutant, mode: onlyMode });
    addStats(total, result.stats);
    console.log(formatRun(result));
    expect(result.violation?.message).toBeUndefined();
  });
} else {
  describe('deterministic simulation', () => {
    it('replays a seed exactly: two runs of one seed give the same trace', async () => {
      for (const [seed, mode] of [[3], [4], [5], [6, 'answer-fast'], [7, 'answer-fast']] as const) {
        const first = await runSeed(seed, { mode });
        const second = await runSeed(seed, { mode });
        expect(first.trace.entries.length).toBeGreaterThan(20);
        expect(second.trace.format()).toBe(first.trace.format());
        expect(second.stats).toEqual(first.stats);
      }
    });

    for (const mode of modesToRun(onlyMode)) {
      it(
        `${mode} mode: every invariant holds over ${seedCount} seeds${mutant === undefined ? '' : ` with the mutant ${mutant}`}`,
        async () => {
          const { seeds, options } = sweepOf(mode, seedCount);
          const sweep = await runSeeds(seeds, { mutant, stopAtFirst, ...options });
          addStats(total, sweep.total);
          console.log(`simulation, ${mode} mode (${Math.round(sweep.elapsedMs)} ms): ${formatStats(sweep.total)}`);
          const [first] = sweep.failures;
          if (first !== undefined) {
            console.log(`${formatRun(first, TRACE_LINES)}\n\n${sweep.failures.length} failing seeds:\n${listFailures(sweep.failures)}`);
          }
          expect(sweep.failures.map((result) => `seed ${result.seed}: ${result.violation?.message}`)).toEqual([]);
          if (!stopAtFirst) expect(sweep.total.seeds).toBe(seedCount);
          if (mutant === undefined) expectNotVacuous(mode, sweep.total, seedCount);
          if (mode === 'ordered' || mode === 'answer-fast') expectBothCompletions(mode, seeds);
        },
        sweepTimeoutMs,
      );
    }
  });
}
