// `pnpm -sw hookline <command>`, the CLI as the docs run it from a clone: in the caller's folder (not
// the root, where pnpm runs root scripts), with the command's own exit code and output and none of
// pnpm's lines (its script header, its "Command failed" banner).
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/pack-packages.mjs';

const exec = promisify(execFile);
const SECRET = 'whsec_script_test';

/** pnpm sets INIT_CWD itself; what `npm test` set for its own scripts is left out. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_') && key !== 'INIT_CWD'),
) as NodeJS.ProcessEnv;

async function hookline(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec('pnpm', ['-sw', 'hookline', ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof code === 'number' ? code : -1, stdout, stderr };
  }
}

// A package's folder, where a file of the same name as one in the root (package.json) tells which was read.
const folder = join(ROOT, 'packages', 'cli');
const bytes = readFileSync(join(folder, 'package.json'));
const signature = createHmac('sha256', SECRET).update(bytes).digest('hex');

describe('pnpm -sw hookline, from a clone', () => {
  it('reads a relative path in the folder it was called from', async () => {
    const result = await hookline(folder, ['verify', '--secret', SECRET, '--signature', signature, 'package.json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`signature matches (${bytes.byteLength} bytes`);
  });

  it("fails with the command's exit code and output alone, no pnpm banner", async () => {
    const mismatch = await hookline(folder, ['verify', '--secret', SECRET, '--signature', '0'.repeat(64), 'package.json']);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stdout).toMatch(/^✗ signature does not match/);
    expect(mismatch.stderr).toBe('');

    const usage = await hookline(ROOT, ['verify', '--signature', signature, 'package.json']);
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(usage.stderr).toMatch(/^hookline verify: --secret is required/);
    for (const output of [mismatch.stdout, mismatch.stderr, usage.stdout, usage.stderr]) {
      expect(output).not.toMatch(/ELIFECYCLE|ERR_PNPM|Command failed|> hookline-monorepo/);
    }
  });
});
