import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The CLI from its sources, as a real process: node's arguments for `bin.ts` with tsx as a loader (as
 * scripts/hookline.mjs runs it), one process. Not tsx's own CLI, which puts a parent process in front:
 * that parent relays a SIGINT by waiting 30 ms for its child to say it has a handler, and on a busy
 * machine gives up, SIGKILLs the child and exits 130, so a Ctrl-C test would fail by chance.
 */
export const HOOKLINE_COMMAND = [
  '--conditions=@hookline/source',
  '--import',
  pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
  fileURLToPath(new URL('./bin.ts', import.meta.url)),
];

/** How a `hookline` process ended. */
export interface HooklineRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `hookline <args>` to its end, colours off and HOOKLINE_SECRET unset unless `env` says otherwise. */
export function runHookline(
  args: string[],
  options: { input?: string | Uint8Array; env?: Record<string, string> } = {},
): Promise<HooklineRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...HOOKLINE_COMMAND, ...args], {
      env: { ...process.env, NO_COLOR: '1', HOOKLINE_SECRET: '', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
