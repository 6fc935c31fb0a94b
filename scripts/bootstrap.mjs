// Set-up for a fresh machine that has only Node >= 20 and npm: makes sure pnpm 10 is there and the
// workspace is installed from the lockfile. `npm run demo` and `npm test` run this first; with
// `--build` (npm test) it also builds the packages when a dist/ is missing or older than its sources,
// so the tests of the packages as published (packaging, export pins) run on a fresh clone too.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const run = (cmd) => spawnSync(cmd, { stdio: 'inherit', shell: true }).status === 0;
const quiet = (cmd) => {
  try {
    return execSync(cmd, { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return '';
  }
};

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`hookline needs Node.js 20 or newer; this is ${process.version}.`);
  process.exit(1);
}
if (!quiet('pnpm --version').startsWith('10.')) {
  console.log('> installing pnpm 10 (npm i -g pnpm@10)');
  if (!run('npm i -g pnpm@10')) {
    console.error('Could not install pnpm globally; run `npm i -g pnpm@10` yourself (maybe with sudo) and try again.');
    process.exit(1);
  }
}
// `pnpm install` is quick when nothing changed; skip it when an install for this lockfile is present.
if (!existsSync('node_modules/.modules.yaml') || process.env.HOOKLINE_FORCE_INSTALL) {
  console.log('> pnpm install --frozen-lockfile');
  if (!run('pnpm install --frozen-lockfile')) process.exit(1);
}

/** Newest modification time under `path` (files only), 0 when absent. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

if (process.argv.includes('--build')) {
  const stale = readdirSync('packages').filter((name) => {
    const dir = join('packages', name);
    const built = existsSync(join(dir, 'dist', 'index.js')) ? statSync(join(dir, 'dist', 'index.js')).mtimeMs : 0;
    return built < Math.max(newest(join(dir, 'src')), newest(join(dir, 'package.json')));
  });
  if (stale.length > 0) {
    console.log(`> pnpm build (not built, or older than their sources: ${stale.join(', ')})`);
    if (!run('pnpm --silent build')) process.exit(1);
  }
}
