// Runs a README's worker.ts in a project folder, as `node --import tsx worker.ts` would, and stops it
// the way a deploy does: SIGTERM, then a wait for the process to end by itself.
import { spawn } from 'node:child_process';

/** How long the worker may take to start and handle its first delivery (tsx compiles the sources). */
const HANDLED_WITHIN_MS = 30_000;
/** How long a deploy would wait after SIGTERM (Kubernetes gives 30 s); a clean shutdown takes far less. */
const EXITED_WITHIN_MS = 10_000;

/** How the process ended. */
export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Starts `worker.ts` in `dir` with `env`, waits for the line `handled <marker>` on its stdout, sends it
 * SIGTERM and resolves with how it exited. Rejects, with its output, when it exits before handling
 * the delivery, or is still running 10 s after SIGTERM (it is then killed).
 */
export async function runUntilHandled(dir: string, marker: string, env: Record<string, string>): Promise<WorkerExit> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@hookline/source', 'worker.ts'], {
    cwd: dir,
    env: { ...process.env, WEBHOOK_SECRET: 'whsec_readme_worker', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<WorkerExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const handled = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.split('\n').includes(`handled ${marker}`)) resolve();
    });
  });
  const within = <T>(ms: number, promise: Promise<T>) =>
    new Promise<T | 'timed out'>((resolve) => {
      const timer = setTimeout(() => resolve('timed out'), ms);
      void promise.then((value) => {
        clearTimeout(timer);
        resolve(value);
      });
    });

  const first = await within(HANDLED_WITHIN_MS, Promise.race([handled.then(() => 'handled' as const), exited]));
  if (first !== 'handled') {
    child.kill('SIGKILL');
    throw new Error(`the worker did not handle its delivery (${JSON.stringify(first)}):\n${output}`);
  }
  child.kill('SIGTERM');
  const exit = await within(EXITED_WITHIN_MS, exited);
  if (exit === 'timed out') {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`the worker was still running ${EXITED_WITHIN_MS / 1000} s after SIGTERM:\n${output}`);
  }
  return exit;
}
