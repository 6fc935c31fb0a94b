import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';

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

/** The machine's CPU time since boot, in clock ticks, all cores together: all of it, and the hypervisor's share. */
export interface CpuTicks {
  total: number;
  steal: number;
}

/**
 * Reads the aggregate line of /proc/stat (Linux only; `undefined` elsewhere). "steal" is time a virtual
 * machine's cores were ready to run but the hypervisor ran another guest: on a shared host it slows
 * everything at once, so a run with much of it measured the neighbours as well as hookline.
 */
export function cpuTicks(): CpuTicks | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== 'cpu') return undefined;
    // user nice system idle iowait irq softirq steal (guest and guest_nice are counted in user and nice)
    const ticks = fields.slice(1, 9).map(Number);
    if (ticks.length < 8 || ticks.some((value) => !Number.isFinite(value))) return undefined;
    return { total: ticks.reduce((sum, value) => sum + value, 0), steal: ticks[7] as number };
  } catch {
    return undefined;
  }
}

/** The share of CPU time stolen between two readings, as a percentage with one decimal ('n/a' off Linux). */
export function stolenPercent(before: CpuTicks | undefined, after: CpuTicks | undefined): string {
  if (before === undefined || after === undefined || after.total <= before.total) return 'n/a';
  return `${(((after.steal - before.steal) / (after.total - before.total)) * 100).toFixed(1)}%`;
}
