// The deterministic simulation (README.md beside this file): real receivers over the real memory
// store (and, in answer-fast mode, the memory queue and workers), a simulated service, faults, and
// simulated time; every invariant checked at every step.
//
//   pnpm test:simulation                                    the CI seeds (1–600), in every mode
//   SIM_SEEDS=100000 pnpm test:simulation                   more seeds
//   SIM_MODE=answer-fast pnpm test:simulation               one mode only
//   SIM_SEED=1234 pnpm test:simulation                      replay one seed, printing its whole trace
//   SIM_SEED=1234 SIM_MODE=answer-fast pnpm test:simulation replay one seed's answer-fast run
//   SIM_MUTANT=extend-noop pnpm test:simulation             run over a broken store or queue (mutants.ts)
import { afterAll, describe, expect, it } from 'vitest';
import { isMode, MODES, type ModeName, modeOf, SYNC_MODES } from './modes';
import { MUTANTS } from './mutants';
import { formatRun, listFailures, runSeeds, type SweepOptions, seedRange } from './run-seeds';
import { addStats, emptyStats, formatStats } from './stats';
import { runSeed } from './world';

/** The fixed seeds CI runs, in each synchronous mode's share and all of them in answer-fast mode. */
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

function modeOption(): ModeName | undefined {
  const value = process.env.SIM_MODE || undefined;
  if (value === undefined || isMode(value)) return value;
  throw new Error(`SIM_MODE must be one of ${MODES.join(', ')}, got "${value}"`);
}

const replaySeed = integer('SIM_SEED');
const seedCount = integer('SIM_SEEDS', CI_SEEDS) as number;
const mutant = process.env.SIM_MUTANT || undefined;
const onlyMode = modeOption();
// Generous: a loaded CI machine may run far slower than the few milliseconds a seed takes.
const sweepTimeoutMs = Math.max(300_000, seedCount * 1_000);

/** A sweep's options for one mode: a synchronous mode takes its share of the seeds, answer-fast mode runs them all. */
function inMode(mode: ModeName): SweepOptions {
  return mode === 'answer-fast' ? { mode } : { only: (seed) => modeOf(seed) === mode };
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

    for (const mode of onlyMode === undefined ? MODES : [onlyMode]) {
      it(
        `${mode} mode: every invariant holds over seeds 1–${seedCount}${mutant === undefined ? '' : ` with the mutant ${mutant}`}`,
        async () => {
          const sweep = await runSeeds(seedRange(1, seedCount), { mutant, ...inMode(mode) });
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

  describe('the checker can fail: each mutant store or queue is caught within the CI seeds', () => {
    for (const [name, entry] of Object.entries(MUTANTS)) {
      it(`${name}: ${entry.description}`, async () => {
        const sync = entry.modes.filter((mode) => (SYNC_MODES as readonly string[]).includes(mode));
        const options: SweepOptions = entry.modes.includes('answer-fast')
          ? { mode: 'answer-fast' }
          : { only: (seed) => sync.includes(modeOf(seed)) };
        const sweep = await runSeeds(seedRange(1, CI_SEEDS), { ...options, mutant: name, stopAtFirst: true });
        const [caught] = sweep.failures;
        expect(caught, `no seed in 1–${CI_SEEDS} caught the mutant ${name}`).toBeDefined();
        console.log(`mutant ${name}: caught on seed ${caught?.seed} by ${caught?.violation?.invariant}`);
        expect(entry.caughtBy).toContain(caught?.violation?.invariant);
      }, 300_000);
    }
  });
}
