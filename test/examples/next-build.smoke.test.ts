// examples/next builds with `next build` while WEBHOOK_SECRET is unset, as in a CI or Docker build
// that has no runtime secrets. Written to its own distDir, so it never meets a running `next dev`.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const exampleDir = fileURLToPath(new URL('../../examples/next/', import.meta.url));
const distDir = '.next-build-check';

function nextBuild(): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_DIST_DIR: distDir, NEXT_TELEMETRY_DISABLED: '1' };
  delete env.WEBHOOK_SECRET;
  return new Promise((resolve, reject) => {
    const child = spawn('pnpm', ['exec', 'next', 'build'], { cwd: exampleDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('examples/next', () => {
  // `next build` adds its distDir's type folders to tsconfig.json: the example's file is put back as it was.
  const tsconfig = join(exampleDir, 'tsconfig.json');
  const tsconfigText = readFileSync(tsconfig, 'utf8');
  afterAll(() => {
    rmSync(join(exampleDir, distDir), { recursive: true, force: true });
    writeFileSync(tsconfig, tsconfigText);
  });

  it('builds with next build while WEBHOOK_SECRET is unset', async () => {
    const { code, output } = await nextBuild();
    expect(output).not.toMatch(/signing secret is empty or missing/);
    expect(code, output.slice(-2000)).toBe(0);
  }, 240_000);
});
