// How the quick-start test runs what it wrote into the fresh project: a README's TypeScript through
// tsx (the workspace's), a README's plain-`node` script as is, a README's shell lines through bash, each
// as a child process whose output is kept, stopped by its id when the test is done with it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../../scripts/pack-packages.mjs';
import { watchEnd } from '../support/child-ended';
import { freePort, retryOnPortClash } from '../support/free-port';
import { cleanEnv, sleep } from './fresh-project';
import { RESULTS } from './quick-start-harnesses';

const TSX = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx/esm')).href;

/** A child process of the test and what it printed so far (stdout and stderr together). */
export interface Child {
  output(): string;
  /** How it ended (`exit code 0`, `SIGTERM`…), undefined while it runs. */
  ended(): string | undefined;
  exited: Promise<string>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has ended. */
  stop(): Promise<void>;
}

/** A quick start serving HTTP, ready: its webhook URL. */
export interface App extends Child {
  url: string;
}

/**
 * Spawns `command` and keeps its output. `group`: in a process group of its own, so that stop()
 * reaches what it started too (bash → a bin → node).
 */
function startChild(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, group = false): Child {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const { exited, ended } = watchEnd(child);
  const signal = (name: NodeJS.Signals) => {
    try {
      if (group && child.pid !== undefined) process.kill(-child.pid, name);
      else child.kill(name);
    } catch {
      // It ended meanwhile.
    }
  };
  return {
    output: () => output,
    ended,
    exited,
    async stop() {
      if (ended() !== undefined) return;
      signal('SIGTERM');
      if ((await Promise.race([exited, sleep(5_000).then(() => 'running')])) === 'running') signal('SIGKILL');
      await exited;
    },
  };
}

/** Resolves with how `child` ended, or stops it after `ms`. */
async function toEnd(child: Child, ms = 60_000): Promise<string> {
  const ended = await Promise.race([child.exited, sleep(ms).then(() => `still running after ${ms / 1000} s`)]);
  await child.stop();
  return ended;
}

/**
 * What `npx <bin>` does for a bin the project installed: runs node_modules/.bin/<bin>. Done by the shell
 * here, as npx's own start-up costs half a second of CPU per line.
 */
const NPX = 'npx() { PATH="$PROJECT_BIN:$PATH" command "$@"; }\n';

/**
 * The ways to run things in the project at `project`. `env` goes to every child (the webhook secret);
 * `plainNode` names the scripts a README runs with `node` itself: everything else, the README's
 * TypeScript and the harnesses that import it, runs through tsx, with `nodeArgs` before it (the
 * workspace's run adds `--conditions=@hookline/source`, so that @hookline/* load from their sources).
 */
export function processesIn(project: string, env: Record<string, string>, plainNode: string[], nodeArgs: string[] = []) {
  function startNode(dir: string, entry: string, more: Record<string, string> = {}): Child {
    const args = plainNode.includes(entry) ? [entry] : [...nodeArgs, '--import', TSX, entry];
    return startChild(process.execPath, args, dir, cleanEnv({ ...env, ...more }));
  }

  /** Starts `entry` with PORT=`port`; resolves once POST `path` refuses an unsigned request (401). */
  async function serveOn(dir: string, entry: string, port: number, more: Record<string, string> = {}, path = '/webhooks'): Promise<App> {
    const child = startNode(dir, entry, { PORT: String(port), ...more });
    const url = `http://127.0.0.1:${port}${path}`;
    try {
      for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
        if (child.ended() !== undefined) throw new Error(`${entry} ended (${child.ended()}) before it answered:\n${child.output()}`);
        const answer = await fetch(url, { method: 'POST', body: '{}' }).catch(() => undefined);
        if (answer?.status === 401) return { ...child, url };
        if (Date.now() > deadline) throw new Error(`${entry} did not answer within 60 s:\n${child.output()}`);
      }
    } catch (error) {
      await child.stop();
      throw error;
    }
  }

  /** Starts `script` with `bash -e` in `dir`, `npx` running the project's bins. */
  function startShell(dir: string, script: string, more: Record<string, string> = {}): Child {
    return startChild(
      'bash',
      ['-e', '-c', NPX + script],
      dir,
      cleanEnv({ PROJECT_BIN: join(project, 'node_modules', '.bin'), ...more }),
      true,
    );
  }

  return {
    serveOn,

    /** serveOn a free port, again on another when the port was taken meanwhile. */
    serve(dir: string, entry: string, options: { path?: string; env?: Record<string, string> } = {}): Promise<App> {
      return retryOnPortClash(async () => serveOn(dir, entry, await freePort(), options.env, options.path));
    },

    /** Runs a script to its end (60 s at most): how it ended and what it printed. */
    async runToEnd(dir: string, entry: string, more: Record<string, string> = {}): Promise<{ ended: string; output: string }> {
      const child = startNode(dir, entry, more);
      return { ended: await toEnd(child), output: child.output() };
    },

    /** Runs an invocation harness (quick-start-harnesses.ts) over `inputs`: what it got back, and its output. */
    async invoke(dir: string, entry: string, inputs: unknown[], more: Record<string, string> = {}) {
      const file = join(dir, `${basename(entry)}.inputs.json`);
      writeFileSync(file, JSON.stringify(inputs));
      const child = startNode(dir, entry, { QUICK_START_INPUTS: file, ...more });
      const ended = await toEnd(child);
      const line = child
        .output()
        .split('\n')
        .find((candidate) => candidate.startsWith(RESULTS));
      if (ended !== 'exit code 0' || line === undefined)
        throw new Error(`${entry} ended (${ended}) without its results:\n${child.output()}`);
      return { results: JSON.parse(line.slice(RESULTS.length)) as unknown[], output: child.output() };
    },

    startShell,

    /** Runs `script` with bash to its end (60 s at most): its exit code (undefined if it did not exit) and output. */
    async runShell(dir: string, script: string, more: Record<string, string> = {}): Promise<{ code: number | undefined; output: string }> {
      const shell = startShell(dir, script, more);
      const ended = await toEnd(shell);
      const code = /^exit code (\d+)$/.exec(ended)?.[1];
      return { code: code === undefined ? undefined : Number(code), output: `${shell.output()}\n(${ended})` };
    },
  };
}

export type Processes = ReturnType<typeof processesIn>;
