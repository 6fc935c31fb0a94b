// `hookline emulator`'s banner: the commands it suggests run as written from where the user is, `npx
// hookline` in a project (a bare `hookline` is not on a project's PATH), or what the caller's wrapper
// says it is (HOOKLINE_INVOKED_AS: `pnpm -sw hookline` in a clone of the repository).
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { HOOKLINE_COMMAND } from './hookline-process.test-support';

function banner(env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...HOOKLINE_COMMAND, 'emulator', '--port', '0'], {
      env: { ...process.env, NO_COLOR: '1', HOOKLINE_INVOKED_AS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no banner within 20 s: ${stdout}`));
    }, 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('Ctrl-C stops')) child.kill('SIGINT');
    });
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(stdout);
    });
  });
}

it('suggests npx hookline in a project, and the wrapper given by HOOKLINE_INVOKED_AS', async () => {
  const plain = await banner({});
  expect(plain).toMatch(/^ {2}npx hookline webhooks create --url /m);
  expect(plain).toMatch(/^ {2}npx hookline trigger message\.delivered$/m);
  expect(plain).not.toMatch(/^ {2}hookline /m);
  const inClone = await banner({ HOOKLINE_INVOKED_AS: 'pnpm -sw hookline' });
  expect(inClone).toMatch(/^ {2}pnpm -sw hookline trigger message\.delivered$/m);
});
