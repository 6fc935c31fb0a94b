// The deterministic simulation (README.md beside this file): real receivers over the real memory
// store, a simulated service, faults, and simulated time; every invariant checked at every step.
//
//   pnpm test:simulation                        the CI seeds (1–600)
//   SIM_SEEDS=100000 pnpm test:simulation       more seeds
//   SIM_SEED=1234 pnpm test:simulation          replay one seed, printing its whole trace
//   SIM_MUTANT=extend-noop pnpm test:simulation run over a broken store (mutants.ts)
import { afterAll, describe, expect, it } from 'vitest';
import { MODES, modeOf } from './modes';
import { MUTANTS } from './mutants';
import { formatRun, listFailures, runSeeds, seedRange } from './run-seeds';
import { addStats, emptyStats, formatStats } from './stats';
import { runSeed } from './world';

/** The fixed seeds CI runs; under a minute in all on a two-core machine. */
const CI_SEEDS = 600;
/** Lines of a failing seed's trace printed in a sweep (a replay prints all of them). */
const TRACE_LINES = 150;

function integer(name: string, fallback?: number): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw new Error(`${name} must be a positive integer, got "${value}"`);
  return parsed;
}

const replaySeed = integer('SIM_SEED');
const seedCount = integer('SIM_SEEDS', CI_SEEDS) as number;
const mutant = process.env.SIM_MUTANT || undefined;
// Generous: a loaded CI machine may run far slower than the few milliseconds a seed takes.
const sweepTimeoutMs = Math.max(300_000, seedCount * 1_000);

const total = emptyStats();
afterAll(() => {
  if (total.seeds > 0) console.log(`simulation summary: ${formatStats(total)}`);
});

if (replaySeed !== undefined) {
  it(`seed ${replaySeed} holds every invariant (replay)`, async () => {
    const result = await runSeed(replaySeed, { mutant });
    addStats(total, result.stats);
    console.log(formatRun(result));
    expect(result.violation?.message).toBeUndefined();
  });
} else {
  describe('deterministic simulation', () => {
    it('replays a seed exactly: two runs of one seed give the same trace', async () => {
      for (const seed of [3, 4, 5]) {
        const first = await runSeed(seed);
        const second = await runSeed(seed);
        expect(first.trace.entries.length).toBeGreaterThan(20);
        expect(second.trace.format()).toBe(first.trace.format());
        expect(second.stats).toEqual(first.stats);
      }
    });

    for (const mode of MODES) {
      it(
        `${mode} mode: every invariant holds over seeds 1–${seedCount}${mutant === undefined ? '' : ` with the mutant ${mutant}`}`,
        async () => {
          const sweep = await runSeeds(seedRange(1, seedCount), { mutant, only: (seed) => modeOf(seed) === mode });
          addStats(total, sweep.total);
          console.log(`simulation, ${mode} mode (${Math.round(sweep.elapsedMs)} ms): ${formatStats(sweep.total)}`);
          const [first] = sweep.failures;
          if (first !== undefined) {
            console.log(`${formatRun(first, TRACE_LINES)}\n\n${sweep.failures.length} failing seeds:\n${listFailures(sweep.failures)}`);
          }
          expect(sweep.failures.map((result) => `seed ${result.seed}: ${result.violation?.message}`)).toEqual([]);
        },
        sweepTimeoutMs,
      );
    }
  });

  describe('the checker can fail: each mutant store is caught within the CI seeds', () => {
    for (const [name, entry] of Object.entries(MUTANTS)) {
      it(`${name}: ${entry.description}`, async () => {
        // The plain modes only, so that what catches the mutant is its own damage and not an ordering guard's.
        const sweep = await runSeeds(seedRange(1, CI_SEEDS), {
          mutant: name,
          only: (seed) => modeOf(seed) !== 'ordered',
          stopAtFirst: true,
        });
        const [caught] = sweep.failures;
        expect(caught, `no seed in 1–${CI_SEEDS} caught the mutant ${name}`).toBeDefined();
        console.log(`mutant ${name}: caught on seed ${caught?.seed} by ${caught?.violation?.invariant}`);
        expect(entry.caughtBy).toContain(caught?.violation?.invariant);
      }, 300_000);
    }
  });
}
