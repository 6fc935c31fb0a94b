// `pnpm pack:all -- @hookline/<name>…` prints the `npm install` commands for the packages a user names,
// with every @hookline package they depend on, and npm accepts them as printed: run one after another
// in a fresh project outside the repository, they install each named package, the app's into
// dependencies and the development tools (the CLI, the testing kit) into devDependencies. Peers are
// left to the user here (`--legacy-peer-deps`), as they install their own framework and database
// client; nothing is fetched. Needs `pnpm build` first, like the packaging tests.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { installCommands, listPackages, missingBuildFiles, ROOT, withDependencies } from '../../scripts/pack-packages.mjs';
import { cleanEnv } from '../packaging/fresh-project';

const exec = promisify(execFile);
const packages = listPackages();
const unbuilt = packages.filter((pkg) => missingBuildFiles(pkg).length > 0).map((pkg) => pkg.name);
const skipReason =
  unbuilt.length > 0 && !process.env.CI ? `pack:all test skipped: ${unbuilt.join(', ')} not built; run \`pnpm build\` first` : undefined;
if (skipReason) console.warn(skipReason);

/** The packages as packed into `folder`, without packing: the names and order are what is tested. */
const packedAs = (folder: string) => packages.map((pkg) => ({ ...pkg, tarball: `${folder}/${pkg.folder}.tgz` }));
const namesOf = (command: string) => command.split(' ').filter((word) => word.endsWith('.tgz'));

describe('the install commands for the packages a user names', () => {
  it('put each package after the @hookline packages it depends on, core first', () => {
    expect(withDependencies(packages, ['@hookline/express', '@hookline/postgres']).map((pkg) => pkg.name)).toEqual([
      '@hookline/core',
      '@hookline/express',
      '@hookline/postgres',
    ]);
    expect(withDependencies(packages, ['@hookline/cli']).map((pkg) => pkg.name)).toEqual([
      '@hookline/core',
      '@hookline/client',
      '@hookline/testing',
      '@hookline/cli',
    ]);
  });

  it('install the app’s packages in one command, and the development tools with what only they need with -D after it', () => {
    const packed = packedAs('p');
    expect(installCommands(packed, ['@hookline/express', '@hookline/postgres'])).toEqual([
      'npm install p/core.tgz p/express.tgz p/postgres.tgz',
    ]);
    expect(installCommands(packed, ['@hookline/cli'])).toEqual(['npm install -D p/core.tgz p/client.tgz p/testing.tgz p/cli.tgz']);
    const mixed = installCommands(packed, ['@hookline/testing', '@hookline/express']);
    expect(mixed).toEqual(['npm install p/core.tgz p/express.tgz', 'npm install -D p/testing.tgz']);
    expect(namesOf(mixed.join(' '))).toHaveLength(3); // each tarball once
  });

  it('refuse a name that is not a package, listing the packages', () => {
    expect(() => withDependencies(packages, ['@hookline/expres'])).toThrow(
      /No package @hookline\/expres here\. The packages: .*@hookline\/express/,
    );
  });
});

describe.skipIf(skipReason !== undefined)('pnpm pack:all -- <names>, followed in a fresh project', () => {
  const work = mkdtempSync(join(tmpdir(), 'hookline-pack-all-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('prints commands that npm accepts as printed, installing every named package and what it needs', async () => {
    const named = ['@hookline/express', '@hookline/postgres', '@hookline/cli'];
    const { stdout } = await exec(process.execPath, [join(ROOT, 'scripts', 'pack-packages.mjs'), join(work, 'packed'), '--', ...named], {
      cwd: ROOT,
      env: cleanEnv(),
      maxBuffer: 16 << 20,
    });
    const commands = stdout
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('npm install '));
    expect(commands, stdout).toHaveLength(2);
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-all-app', private: true }));
    for (const command of commands) {
      const [, ...args] = command.split(' ');
      await exec(
        'npm',
        [...args, '--prefer-offline', '--no-audit', '--no-fund', '--legacy-peer-deps', '--ignore-scripts', '--loglevel=error'],
        {
          cwd: app,
          env: cleanEnv(),
          maxBuffer: 16 << 20,
        },
      );
    }
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['@hookline/core', '@hookline/express', '@hookline/postgres']);
    expect(Object.keys(manifest.devDependencies ?? {}).sort()).toEqual(['@hookline/cli', '@hookline/client', '@hookline/testing']);
    for (const name of [...named, '@hookline/core', '@hookline/client', '@hookline/testing'])
      expect(existsSync(join(app, 'node_modules', name, 'package.json')), name).toBe(true);
    const { stdout: version } = await exec(join(app, 'node_modules', '.bin', 'hookline'), ['--version'], { cwd: app, env: cleanEnv() });
    expect(version.trim()).toBe(packages.find((pkg) => pkg.name === '@hookline/cli')?.manifest.version);
  }, 180_000);
});
