/** Runs many seeds and reports them: the summary line, and for a failure its seed, replay command and trace. */
import { modeOf } from './modes';
import { addStats, emptyStats, formatStats, type SimStats } from './stats';
import { describeScenario, type RunOptions, type RunResult, runSeed } from './world';

export interface Sweep {
  readonly total: SimStats;
  readonly failures: RunResult[];
  readonly elapsedMs: number;
}

export interface SweepOptions extends RunOptions {
  /** Skip seeds this predicate refuses (a mode filter). */
  readonly only?: (seed: number) => boolean;
  /** Stop at the first failing seed. */
  readonly stopAtFirst?: boolean;
}

export async function runSeeds(seeds: Iterable<number>, options: SweepOptions = {}): Promise<Sweep> {
  const total = emptyStats();
  const failures: RunResult[] = [];
  const started = performance.now();
  for (const seed of seeds) {
    if (options.only !== undefined && !options.only(seed)) continue;
    const result = await runSeed(seed, options);
    addStats(total, result.stats);
    if (result.violation !== undefined) {
      failures.push(result);
      if (options.stopAtFirst) break;
    }
  }
  return { total, failures, elapsedMs: performance.now() - started };
}

export function seedRange(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, index) => first + index);
}

/** The command that replays a run, in the same mode and with the same mutant. */
export function replayCommand(result: Pick<RunResult, 'seed' | 'mutant' | 'scenario'>): string {
  const mode = result.scenario.mode === modeOf(result.seed) ? '' : ` SIM_MODE=${result.scenario.mode}`;
  return `SIM_SEED=${result.seed}${mode}${result.mutant === undefined ? '' : ` SIM_MUTANT=${result.mutant}`} pnpm test:simulation`;
}

/** A failed (or replayed) run: what was violated, how to replay it, and its trace (`lastLines` of it, or all). */
export function formatRun(result: RunResult, lastLines?: number): string {
  const head = [
    result.violation === undefined ? `seed ${result.seed} held every invariant` : `simulation failed on seed ${result.seed}`,
    `  ${describeScenario(result.scenario)}${result.mutant === undefined ? '' : `; mutant ${result.mutant}`}`,
  ];
  if (result.violation !== undefined) head.push(`  invariant ${result.violation.message}`);
  head.push(`  replay: ${replayCommand(result)}`);
  head.push(`  ${formatStats(result.stats)}`);
  head.push(`trace (${result.trace.steps} steps, ${result.trace.entries.length} lines):`);
  return `${head.join('\n')}\n${result.trace.format(lastLines)}`;
}

/** One line per failing seed: its seed and invariant. */
export function listFailures(failures: readonly RunResult[]): string {
  return failures.map((result) => `  seed ${result.seed} (${result.scenario.mode}): ${result.violation?.invariant}`).join('\n');
}
