/** The environment the simulation's tests read: SIM_SEED, SIM_SEEDS, SIM_MODE, SIM_MUTANT. */
import { isMode, MODES, type ModeName } from './modes';

/** The seeds CI runs in each mode. */
export const CI_SEEDS = 600;

function integer(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw new Error(`${name} must be a positive integer, got "${value}"`);
  return parsed;
}

function modeOption(): ModeName | undefined {
  const value = process.env.SIM_MODE || undefined;
  if (value === undefined || isMode(value)) return value;
  throw new Error(`SIM_MODE must be one of ${MODES.join(', ')}, got "${value}"`);
}

export interface SimulationOptions {
  /** SIM_SEED: replay this one seed, printing its trace. */
  readonly replaySeed: number | undefined;
  /** SIM_SEEDS: seeds per mode (CI_SEEDS unless set). */
  readonly seedCount: number;
  /** SIM_MUTANT_SEEDS: seeds per mode for each mutant's catch rate (mutants.test.ts's own count unless set). */
  readonly mutantSeeds: number | undefined;
  /** SIM_MUTANT: run over this mutant. */
  readonly mutant: string | undefined;
  /** SIM_MODE: this mode only. */
  readonly onlyMode: ModeName | undefined;
  /** SIM_STOP_AT_FIRST=1: a sweep stops at its first failing seed (a mutation run needs no more). */
  readonly stopAtFirst: boolean;
}

export function simulationOptions(): SimulationOptions {
  return {
    replaySeed: integer('SIM_SEED'),
    seedCount: integer('SIM_SEEDS') ?? CI_SEEDS,
    mutantSeeds: integer('SIM_MUTANT_SEEDS'),
    mutant: process.env.SIM_MUTANT || undefined,
    onlyMode: modeOption(),
    stopAtFirst: process.env.SIM_STOP_AT_FIRST === '1',
  };
}

export function modesToRun(only: ModeName | undefined): readonly ModeName[] {
  return only === undefined ? MODES : [only];
}
