/**
 * The CPU time a database server on this machine has used so far, read from /proc: the sum over every
 * process of that server, since PostgreSQL runs one per connection. The stores suite reads it before
 * and after a round, so a store's figure includes what its database spent serving it, which the
 * receiver's own CPU leaves out. Linux only, and only for a server on this host: anywhere else it
 * answers `undefined` and the table says so.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The command names (`comm`) each server's processes run under. */
const COMMANDS = {
  Redis: ['redis-server'],
  PostgreSQL: ['postgres'],
  MySQL: ['mariadbd', 'mysqld'],
} as const;

export type DatabaseServer = keyof typeof COMMANDS;

/** Clock ticks per second, the unit of /proc's CPU times (100 on nearly every Linux). */
const ticksPerSecond = (() => {
  const printed = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
  return Number.isFinite(printed) && printed > 0 ? printed : 100;
})();

/** A process's command name and its user + system time in ticks, or undefined once it has gone. */
function readStat(pid: string): { command: string; ticks: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces, so split after its closing parenthesis.
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  // Fields 14 and 15 of the whole line (utime, stime) are 11 and 12 after "pid (comm) ".
  return { command: stat.slice(open + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** µs of CPU the server's processes have used, or undefined when none runs here (or there is no /proc). */
export function serverCpuMicros(server: DatabaseServer): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const commands: readonly string[] = COMMANDS[server];
  let ticks = 0;
  let found = false;
  for (const pid of pids) {
    const stat = readStat(pid);
    if (stat === undefined || !commands.includes(stat.command)) continue;
    found = true;
    ticks += stat.ticks;
  }
  return found ? (ticks / ticksPerSecond) * 1e6 : undefined;
}
