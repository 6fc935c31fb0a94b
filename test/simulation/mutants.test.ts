// The simulation can fail, and how well: each mutant (mutants.ts: broken stores and queues, and the
// receiver's own defects put back into a copy of core, receiver-mutants.ts) runs over 200 seeds of each
// of its modes (those whose scenario can reach it, where it names a condition), and its catch rate
// (failing seeds / seeds) must reach its floor: the rate measured over these seeds when it was set,
// less five points. A seed that fails by an invariant the mutant does not name fails the test too: it
// would be a false alarm, or a mutant that breaks more than it says.
//
//   SIM_MUTANT=stale-check-skipped pnpm vitest run test/simulation/mutants.test.ts   one mutant's rate
//   SIM_MUTANT_SEEDS=1000 pnpm vitest run test/simulation/mutants.test.ts            more seeds per mode (the floors still apply)
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { checkMutantTable, MUTANTS, type Mutant } from './mutants';
import { RECEIVER_MUTANTS } from './receiver-mutants';
import { formatRun, runSeeds, seedRange } from './run-seeds';
import { planScenario } from './scenario';
import { simulationOptions } from './sim-options';
import type { RunResult } from './world';

/** Seeds per mode each mutant runs over (those its scenario can reach, when it names a condition); SIM_MUTANT_SEEDS changes it. */
const MUTANT_SEEDS = 200;
/** How far past MUTANT_SEEDS the seeds are scanned for ones whose scenario reaches the mutant. */
const SCAN_LIMIT = 20 * MUTANT_SEEDS;

const { mutantSeeds, mutant: only, replaySeed } = simulationOptions();
const perMode = mutantSeeds ?? MUTANT_SEEDS;

/** The seeds a mutant runs over in one mode: the first `perMode` whose scenario can reach it. */
function seedsFor(entry: Mutant, mode: (typeof entry.modes)[number]): number[] {
  if (entry.reaches === undefined) return seedRange(1, perMode);
  const seeds: number[] = [];
  for (let seed = 1; seeds.length < perMode && seed <= Math.max(SCAN_LIMIT, 20 * perMode); seed++) {
    if (entry.reaches(planScenario(seed, mode))) seeds.push(seed);
  }
  return seeds;
}

function percent(share: number): string {
  return `${(100 * share).toFixed(1)} %`;
}

describe('the receiver mutants carry along with core', () => {
  it('names a wrapper or an edit for every mutant, and says why where its floor is under 90 %', () => {
    expect(checkMutantTable).not.toThrow();
    const unexplained = Object.entries(MUTANTS).filter(([, entry]) => entry.floor < 0.9 && entry.floorWhy === undefined);
    expect(unexplained.map(([name]) => name)).toEqual([]);
  });

  for (const [name, edit] of Object.entries(RECEIVER_MUTANTS)) {
    it(`${name}: its snippet is in packages/core/src/${edit.file}, exactly once`, async () => {
      const source = await readFile(new URL(`../../packages/core/src/${edit.file}`, import.meta.url), 'utf8');
      const first = source.indexOf(edit.find);
      expect(first, `carry the mutant ${name} along with the change to ${edit.file} (receiver-mutants.ts)`).toBeGreaterThanOrEqual(0);
      expect(source.indexOf(edit.find, first + 1)).toBe(-1);
    });
  }
});

describe.skipIf(replaySeed !== undefined)('each mutant is caught, at its measured rate or better', () => {
  for (const [name, entry] of Object.entries(MUTANTS)) {
    if (only !== undefined && only !== name) continue;
    it(`${name}: ${entry.description}`, async () => {
      let seeds = 0;
      const failures: RunResult[] = [];
      const started = performance.now();
      for (const mode of entry.modes) {
        const sweep = await runSeeds(seedsFor(entry, mode), { mode, mutant: name });
        seeds += sweep.total.seeds;
        failures.push(...sweep.failures);
      }
      const unexpected = failures.filter((result) => !entry.caughtBy.includes(result.violation?.invariant ?? ''));
      const byInvariant: Record<string, number> = {};
      for (const result of failures) {
        const invariant = result.violation?.invariant ?? '';
        byInvariant[invariant] = (byInvariant[invariant] ?? 0) + 1;
      }
      const rate = seeds === 0 ? 0 : failures.length / seeds;
      console.log(
        `mutant ${name}: caught in ${failures.length} of ${seeds} seeds (${percent(rate)}; floor ${percent(entry.floor)}) of ${entry.modes.join(', ')} in ${Math.round(performance.now() - started)} ms, by ${JSON.stringify(byInvariant)}`,
      );
      if (entry.floorWhy !== undefined) console.log(`  (why its floor is under 90 %: ${entry.floorWhy})`);
      if (unexpected[0] !== undefined) console.log(formatRun(unexpected[0], 80));
      expect(unexpected.map((result) => `seed ${result.seed} (${result.scenario.mode}): ${result.violation?.message}`)).toEqual([]);
      expect(seeds).toBeGreaterThan(0);
      expect(
        rate,
        `${name} was caught in ${percent(rate)} of its seeds, under its floor of ${percent(entry.floor)}`,
      ).toBeGreaterThanOrEqual(entry.floor);
    }, 600_000);
  }
});
