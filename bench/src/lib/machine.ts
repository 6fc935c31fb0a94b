import { cpus, totalmem } from 'node:os';
import { availableParallelism } from 'node:os';

/** The machine line every RESULTS.md section can cite: cores, CPU model, memory, Node version. */
export function machineSummary(): { nproc: number; cpu: string; memoryGiB: number; node: string; platform: string } {
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}
