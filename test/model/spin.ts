import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** How one model is built and searched. */
export interface SpinRun {
  /** The Promela file, an absolute path. */
  model: string;
  /** `-D` switches for Spin's preprocessor, e.g. `['NRECV=3']`. */
  defines?: readonly string[];
  /** `safety`: assertions and end states (`-DSAFETY`); `liveness`: the model's LTL claim under weak fairness (`-a -f`). */
  mode: 'safety' | 'liveness';
  /**
   * Compile pan with optimisation (-O1: -O2 takes 2 s longer to compile and saves less than that on the
   * CI searches): worth its seconds for a full search, not for one that stops at the first error.
   */
  optimise: boolean;
  /**
   * pan ignores assertion violations (`-A`): a liveness search then reports only what breaks the LTL
   * claim, even where an assertion would fail first.
   */
  ignoreAssertions?: boolean;
  /** Bound on each command (spin, gcc, pan). */
  timeoutMs: number;
}

/** What pan reported. */
export interface SpinResult {
  /** pan's whole report. */
  output: string;
  errors: number;
  statesStored: number;
  elapsedSeconds: number;
  /** The assertions pan found violated (their text), or `acceptance cycle` for an LTL counterexample. */
  violations: string[];
  /** Why the search was not complete, if it was not (depth or memory bound, a bitstate search). */
  incomplete: string[];
  /** The counterexample replayed by spin: the model's printf lines, when pan found one. */
  narration: string;
}

// A search stops at the first error, so "Search not completed" is only a problem without one.
const INCOMPLETE: Array<[RegExp, string]> = [
  [/max search depth too small/i, 'the depth bound (-m) cut the search'],
  [/reached -DMEMLIM bound|out of memory/i, 'the memory bound cut the search'],
  [/Bit statespace search/i, 'a bitstate (partial) search'],
];

/** The version line of `spin -V`, or undefined when spin (or gcc, which builds its verifiers) is missing. */
export async function spinVersion(): Promise<string | undefined> {
  const spin = await run('spin', ['-V'], tmpdir(), 10_000).catch(() => undefined);
  const gcc = await run('gcc', ['--version'], tmpdir(), 10_000).catch(() => undefined);
  if (spin?.code !== 0 || gcc?.code !== 0) return undefined;
  return spin.stdout.trim();
}

/**
 * Generates the verifier (`spin -a`), compiles it and runs it in a fresh temporary directory (nothing
 * is written into the repository), and replays the counterexample when there is one.
 */
export async function runSpin(options: SpinRun): Promise<SpinResult> {
  const dir = await mkdtemp(join(tmpdir(), 'hookline-spin-'));
  try {
    const defines = (options.defines ?? []).map((define) => `-D${define}`);
    await mustRun('spin', [...defines, '-a', options.model], dir, options.timeoutMs);
    const cflags = [options.optimise ? '-O1' : '-O0', '-DCOLLAPSE', '-DMEMLIM=2048'];
    if (options.mode === 'safety') cflags.push('-DSAFETY', '-DNOCLAIM');
    await mustRun('gcc', [...cflags, '-o', 'pan', 'pan.c'], dir, options.timeoutMs);
    const panFlags = ['-m200000', '-n', ...(options.mode === 'liveness' ? ['-a', '-f'] : []), ...(options.ignoreAssertions ? ['-A'] : [])];
    const pan = await run('./pan', panFlags, dir, options.timeoutMs);
    const output = pan.stdout + pan.stderr;
    const errors = Number(/errors: (\d+)/.exec(output)?.[1] ?? Number.NaN);
    const result: SpinResult = {
      output,
      errors,
      statesStored: Number(/(\d+) states, stored/.exec(output)?.[1] ?? Number.NaN),
      elapsedSeconds: Number(/pan: elapsed time ([\d.e+]+) seconds/.exec(output)?.[1] ?? Number.NaN),
      violations: [...output.matchAll(/assertion violated\s+(.*?) \(at depth/g)]
        .map((match) => match[1] as string)
        .concat(/acceptance cycle/.test(output) ? ['acceptance cycle'] : []),
      incomplete: INCOMPLETE.filter(([pattern]) => pattern.test(output)).map(([, why]) => why),
      narration: '',
    };
    if (errors === 0 && /Search not completed/.test(output)) result.incomplete.push('pan did not complete the search');
    if (errors > 0) {
      const trail = `${basename(options.model)}.trail`;
      const replay = await run('spin', [...defines, '-t', '-k', trail, options.model], dir, options.timeoutMs);
      result.narration = narration(replay.stdout);
    }
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The model's printf lines of a replay, up to the violation, unindented. */
function narration(replay: string): string {
  const lines: string[] = [];
  for (const line of replay.split('\n')) {
    if (/^spin: trail ends|^#processes/.test(line)) break;
    if (line.trim() !== '' && !/^spin: /.test(line)) lines.push(line.trim());
  }
  return lines.join('\n');
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end within timeoutMs; a non-zero exit is an answer, not an error. */
function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && (error.killed || typeof error.code !== 'number')) {
        reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms or could not start: ${error.message}`));
        return;
      }
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
  });
}

async function mustRun(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Ran> {
  const ran = await run(command, args, cwd, timeoutMs);
  if (ran.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${ran.code}:\n${ran.stdout}${ran.stderr}`);
  return ran;
}
