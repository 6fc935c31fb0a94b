// Builds the Next.js fixture app once (skipped when nothing it is built from changed) and serves it
// with `next start` on a free port of 127.0.0.1.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
/** The fixture app's directory. */
export const NEXT_APP_DIR = join(repo, 'test/fixtures/next-app');
const nextBin = createRequire(join(repo, 'test/package.json')).resolve('next/dist/bin/next');
const stampFile = join(NEXT_APP_DIR, '.next', 'hookline-build-hash');

function hashTree(hash: ReturnType<typeof createHash>, path: string): void {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (entry === '.next' || entry === 'node_modules' || entry === 'next-env.d.ts' || entry.endsWith('.test.ts')) continue;
      hashTree(hash, join(path, entry));
    }
    return;
  }
  hash.update(path).update(readFileSync(path));
}

/** Everything the build depends on: the app, the adapter and core sources, the receiver, Next's version. */
function sourceHash(): string {
  const hash = createHash('sha256');
  for (const path of [
    NEXT_APP_DIR,
    join(repo, 'packages/core/src'),
    join(repo, 'packages/next/src'),
    join(repo, 'test/adapters/support/test-receiver.ts'),
  ]) {
    hashTree(hash, path);
  }
  hash.update(readFileSync(join(nextBin, '../../../package.json')));
  return hash.digest('hex');
}

/** `next build` unless the last build came from the same sources. */
export function buildNextApp(): void {
  const hash = sourceHash();
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === hash) return;
  const result = spawnSync(process.execPath, [nextBin, 'build'], {
    cwd: NEXT_APP_DIR,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`next build failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  writeFileSync(stampFile, hash);
}

/** A running `next start`. */
export interface NextServer {
  base: string;
  close(): Promise<void>;
}

/** Starts `next start -p 0` and resolves with the address it printed. */
export function startNextApp(): Promise<NextServer> {
  const child: ChildProcess = spawn(process.execPath, [nextBin, 'start', '-p', '0', '-H', '127.0.0.1'], {
    cwd: NEXT_APP_DIR,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const close = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1] && /Ready/.test(output)) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ base: match[1], close });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) => reject(new Error(`next start exited with ${code} before it was ready:\n${output}`)));
  });
}
