// Builds the Next.js fixture app once per Next major `@hookline/next` claims (skipped when nothing it
// is built from changed) and serves each build with that major's `next start` on a free port of
// 127.0.0.1.
//
// Each major builds its own copy of test/fixtures/next-app in test/.next/next-<major> (gitignored,
// at the fixture's depth so its relative imports still reach test/ and packages/). A copy per major
// keeps the builds apart: each has its own `.next`, its own `node_modules/next` (a link to that
// major's package, so the app and its server resolve the same Next), and Next's rewrites of
// tsconfig.json / next-env.d.ts (which differ between majors) never touch the tracked fixture.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
/** The fixture app's directory (the sources every major's copy is made from). */
export const NEXT_APP_DIR = join(repo, 'test/fixtures/next-app');
const requireFromTests = createRequire(join(repo, 'test/package.json'));

/** The Next.js majors the matrix runs on: the lowest and the highest of `@hookline/next`'s peer range. */
export const NEXT_MAJORS = [15, 16] as const;
/** One of {@link NEXT_MAJORS}. */
export type NextMajor = (typeof NEXT_MAJORS)[number];

/**
 * Each major's package in test/package.json (Next 15 as the npm alias `next15`) and its build flags.
 * Next 15 builds with webpack, its default; `--no-lint` skips its ESLint pass (Next 16 dropped both
 * the pass and the flag, and builds with Turbopack).
 */
const INSTALLS: Record<NextMajor, { packageName: string; buildArgs: string[] }> = {
  15: { packageName: 'next15', buildArgs: ['--no-lint'] },
  16: { packageName: 'next', buildArgs: [] },
};

/** Where one major's Next package is installed, and its version. */
interface NextInstall {
  major: NextMajor;
  version: string;
  packageDir: string;
  /** That package's own CLI (the two packages' `node_modules/.bin/next` collide). */
  bin: string;
  buildArgs: string[];
  /** The fixture copy this major builds and serves. */
  appDir: string;
}

function nextInstall(major: NextMajor): NextInstall {
  const { packageName, buildArgs } = INSTALLS[major];
  const packageDir = dirname(requireFromTests.resolve(`${packageName}/package.json`));
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  if (!version.startsWith(`${major}.`)) throw new Error(`${packageName} in test/package.json is Next ${version}, not Next ${major}`);
  return { major, version, packageDir, bin: join(packageDir, 'dist/bin/next'), buildArgs, appDir: join(repo, `test/.next/next-${major}`) };
}

const SKIPPED = new Set(['.next', 'node_modules', 'next-env.d.ts']);

function hashTree(hash: ReturnType<typeof createHash>, path: string): void {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (SKIPPED.has(entry) || entry.endsWith('.test.ts')) continue;
      hashTree(hash, join(path, entry));
    }
    return;
  }
  hash.update(path).update(readFileSync(path));
}

/** Everything a build depends on: the app, the adapter and core sources, the receiver, this major's Next. */
function sourceHash(install: NextInstall): string {
  const hash = createHash('sha256');
  for (const path of [
    NEXT_APP_DIR,
    join(repo, 'packages/core/src'),
    join(repo, 'packages/next/src'),
    join(repo, 'test/adapters/support/test-receiver.ts'),
  ]) {
    hashTree(hash, path);
  }
  hash.update(readFileSync(join(install.packageDir, 'package.json')));
  hash.update(install.buildArgs.join(' '));
  return hash.digest('hex');
}

function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** Makes `appDir` a fresh copy of the fixture (keeping `.next`, Next's build cache) linked to this major's Next. */
function prepareCopy({ appDir, packageDir }: NextInstall): void {
  mkdirSync(appDir, { recursive: true });
  for (const entry of readdirSync(appDir)) {
    if (entry !== '.next' && entry !== 'node_modules') rmSync(join(appDir, entry), { recursive: true, force: true });
  }
  cpSync(NEXT_APP_DIR, appDir, { recursive: true, filter: (source) => !SKIPPED.has(basename(source)) });
  const link = join(appDir, 'node_modules/next');
  if (linkTarget(link) === packageDir) return;
  rmSync(link, { recursive: true, force: true });
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(packageDir, link, 'dir');
}

/** Runs a CLI to completion, resolving its combined output; rejects with it on a non-zero exit. */
function run(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`))));
  });
}

/** `next build` of this major's copy, unless the last build came from the same sources. Resolves the Next version. */
export async function buildNextApp(major: NextMajor): Promise<string> {
  const install = nextInstall(major);
  const hash = sourceHash(install);
  const stampFile = join(install.appDir, '.next', 'hookline-build-hash');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === hash) return install.version;
  prepareCopy(install);
  await run([install.bin, 'build', ...install.buildArgs], install.appDir);
  writeFileSync(stampFile, hash);
  return install.version;
}

/** A running `next start`. */
export interface NextServer {
  base: string;
  /** The Next.js version the server announced (`▲ Next.js 15.5.29`). */
  version: string;
  /** The `next start` process (it serves the requests itself). */
  pid: number;
  close(): Promise<void>;
}

/** Starts this major's `next start -p 0` on its build and resolves with the address it printed. */
export function startNextApp(major: NextMajor): Promise<NextServer> {
  const install = nextInstall(major);
  const child: ChildProcess = spawn(process.execPath, [install.bin, 'start', '-p', '0', '-H', '127.0.0.1'], {
    cwd: install.appDir,
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
        const version = /Next\.js (\d+\.\d+\.\d+\S*)/.exec(output)?.[1] ?? 'unknown';
        if (!version.startsWith(`${major}.`)) {
          void close();
          reject(new Error(`expected Next ${major}, the server announced Next ${version}:\n${output}`));
          return;
        }
        resolve({ base: match[1], version, pid: child.pid as number, close });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) => reject(new Error(`next start exited with ${code} before it was ready:\n${output}`)));
  });
}
