/**
 * wrk, the C load generator from the OS packages (`apt-get install wrk`): what the suites that must
 * not be limited by their load generator use. autocannon runs in Node and signs every request there,
 * which costs it about as much CPU per request as the receiver under test; wrk sends pre-built
 * requests for a fraction of that.
 */
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** wrk's version line, or undefined when wrk is not installed. */
export function wrkVersion(): string | undefined {
  const run = spawnSync('wrk', ['--version']);
  if (run.error !== undefined) return undefined;
  return /wrk [^\n]*/.exec(run.stdout.toString())?.[0]?.trim() ?? 'wrk';
}

/** A Lua string literal: a JSON string is one (no \u escapes are needed for what the suites send). */
export const luaString = (text: string): string => JSON.stringify(text);

/** What one wrk run printed, read. Latencies in milliseconds. */
export interface WrkResult {
  requestsPerSecond: number;
  total: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Connect, read, write errors and timeouts. */
  errors: number;
  /** wrk's own user + system CPU time over the run. */
  cpuMicros: number;
  output: string;
}

const toMs = (value: string, unit: string) => Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);

function percentile(output: string, label: string): number {
  const match = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output);
  return match === null ? Number.NaN : Math.round(toMs(match[1] as string, match[2] as string) * 100) / 100;
}

/**
 * Runs wrk (1 thread) against `url` with a Lua `script`, on the load generator's core (CPU 0) when the
 * machine has two or more, under bash so that `times` reports wrk's CPU time when it ends.
 */
export async function runWrk(options: { url: string; script: string; seconds: number; connections: number }): Promise<WrkResult> {
  const pin = availableParallelism() >= 2 ? ['taskset', '-c', '0'] : [];
  const wrk = [...pin, 'wrk', '-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency', '-s', options.script, options.url];
  const child = spawn('bash', ['-c', '"$@"; status=$?; times; exit $status', 'bash', ...wrk], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  const status = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (status !== 0) throw new Error(`wrk exited with ${status}:\n${output}`);
  // `times` prints the shell's user and system time, then its children's: "0m3.120s 0m1.004s".
  const children = output.trim().split('\n').pop() ?? '';
  const [user = 0, system = 0] = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? Number.NaN),
    total: Number(/(\d+) requests in/.exec(output)?.[1] ?? 0),
    p50: percentile(output, '50'),
    p99: percentile(output, '99'),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    errors: socketErrors === null ? 0 : socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0),
    cpuMicros: Math.round((user + system) * 1e6),
    output,
  };
}
