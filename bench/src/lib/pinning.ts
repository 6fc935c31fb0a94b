import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Where the HTTP suites' processes run. On a small machine the server under test and the load
 * generator otherwise trade cores at the scheduler's whim, and a round's req/s then measures that as
 * much as the server: pinned, the server has the last core to itself and the load generator the
 * first, so rounds repeat and a ratio compares servers. Needs `taskset` (util-linux) and 2+ cores;
 * anywhere else processes run unpinned and `pinningNote()` says so.
 */
const cores = availableParallelism();
const hasTaskset = process.platform === 'linux' && cores >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** The role of a benchmark process. */
export type Role = 'server' | 'load';

/** The command and arguments that start `node args…` on the core(s) of `role`. */
export function pinned(role: Role, args: readonly string[]): { command: string; args: string[] } {
  if (!hasTaskset) return { command: process.execPath, args: [...args] };
  const core = role === 'server' ? cores - 1 : 0;
  return { command: 'taskset', args: ['-c', String(core), process.execPath, ...args] };
}

/** One sentence for a section's method paragraph. */
export function pinningNote(): string {
  return hasTaskset
    ? `The server runs pinned to CPU ${cores - 1} and the load generator to CPU 0 (taskset), so they never share a core.`
    : 'The server and the load generator share the machine cores (no taskset here).';
}
