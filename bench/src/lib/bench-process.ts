/**
 * The suite side of the HTTP benchmarks: start a server process (pinned), load it with autocannon
 * in another process (pinned, load.ts) or with wrk (wrk-load.ts), and read the server's own CPU time
 * for the requests it answered. The server side of the same protocol is bench-server.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pinned } from './pinning';
import type { WrkResult } from './wrk';
import { runFreshWrk } from './wrk-load';

const here = dirname(fileURLToPath(import.meta.url));
// The same module resolution the suite itself runs with (the source condition, or the built dist/).
const nodeArgs = ['--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--conditions'))];

/** A started benchmark server. */
export interface BenchServer<K extends string = string> {
  kind: K;
  child: ChildProcess;
  port: number;
}

/** One round against one server: the load generator's view and the server's CPU per request. */
export interface LoadSample {
  rps: number;
  p50: number;
  p99: number;
  /** The server process's user + system CPU µs per request it answered in the round. */
  cpuPerRequest: number;
  /**
   * The load generator's own user + system CPU µs per request it got an answer to: autocannon's signing
   * included, wrk's not (its deliveries are signed before the round).
   */
  loadCpuPerRequest: number;
  non2xx: number;
  errors: number;
}

/**
 * Starts `script args…` pinned to the server core; resolves once it printed `{"port":N}`. With
 * `wrapper` (a command and its arguments, such as valgrind's), node runs under it instead, unpinned.
 */
export async function startBenchServer<K extends string>(
  kind: K,
  script: string,
  args: readonly string[],
  wrapper?: readonly string[],
): Promise<BenchServer<K>> {
  const node = [...nodeArgs, script, ...args];
  const { command, args: argv } =
    wrapper === undefined
      ? pinned('server', node)
      : { command: wrapper[0] as string, args: [...wrapper.slice(1), process.execPath, ...node] };
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('{')) return { kind, child, port: (JSON.parse(line) as { port: number }).port };
  }
  throw new Error(`the ${kind} server exited before listening`);
}

/** Ends a round: the server's CPU time and requests since it was told 'start'. */
export function stopCounting(server: BenchServer): Promise<{ cpuMicros: number; requests: number }> {
  return new Promise((resolve) => {
    server.child.once('message', (reply) => resolve(reply as { cpuMicros: number; requests: number }));
    server.child.send('stop');
  });
}

/**
 * Loads `server` for `seconds` with `connections` connections: autocannon, signing requests as
 * `signer` expects, or wrk with fresh hookline deliveries (`generator: 'wrk'`).
 */
export async function runLoad(
  server: BenchServer,
  options: { seconds: number; connections: number; signer?: 'hookline' | 'octokit'; generator?: 'autocannon' | 'wrk' },
): Promise<LoadSample> {
  const { seconds, connections, signer = 'hookline' } = options;
  if (options.generator === 'wrk') return wrkLoad(server, seconds, connections);
  server.child.send('start');
  const loader = pinned('load', [...nodeArgs, join(here, 'load.ts'), String(server.port), signer, String(seconds), String(connections)]);
  const child = spawn(loader.command, loader.args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const used = await stopCounting(server);
  return sample(JSON.parse(out.trim().split('\n').pop() ?? '{}') as GeneratorResult, used);
}

async function wrkLoad(server: BenchServer, seconds: number, connections: number): Promise<LoadSample> {
  // The server's CPU is counted from once the deliveries are signed, when wrk starts.
  const result = await runFreshWrk(server.port, seconds, connections, () => server.child.send('start'));
  return sample(result, await stopCounting(server));
}

/** What either load generator reports of a round (load.ts prints the same fields as wrk.ts reads). */
type GeneratorResult = Pick<WrkResult, 'requestsPerSecond' | 'total' | 'p50' | 'p99' | 'non2xx' | 'errors' | 'cpuMicros'>;

function sample(result: GeneratorResult, used: { cpuMicros: number; requests: number }): LoadSample {
  return {
    rps: result.requestsPerSecond,
    p50: result.p50,
    p99: result.p99,
    cpuPerRequest: used.cpuMicros / Math.max(1, used.requests),
    loadCpuPerRequest: result.cpuMicros / Math.max(1, result.total),
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Asks the server to exit and waits until it has. */
export async function stopBenchServer(server: BenchServer): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.send('exit');
  await exited;
}
