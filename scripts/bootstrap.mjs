// Set-up for a fresh machine that has only Node >= 20 and npm: makes sure pnpm 10 is there and the
// workspace is installed from the lockfile. `npm run demo` and `npm test` run this first; with
// `--build` (npm test) it also builds the packages whose dist/ is missing or older than their sources,
// so the tests of the packages as published (packaging, export pins) run on a fresh clone too.
//
// It prints one line per step it takes (nothing when everything is in place) and keeps the tools' own
// output for when a step fails. On a fresh clone the install runs in two passes: first the packages
// and the root, then the packages that ship a command (`hookline`) are built, then everything else is
// installed. pnpm links a package's command into its dependants' node_modules/.bin only when the file
// exists, so installing everything at once would warn that it cannot link a dist/ that is not built yet.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const started = (label) => {
  process.stdout.write(`hookline: ${label} …`);
  return performance.now();
};
const finished = (since) => process.stdout.write(` done (${((performance.now() - since) / 1000).toFixed(1)} s)\n`);

/** Runs a command quietly; on failure prints its output and exits. Returns the output. */
function step(label, command, args) {
  const since = started(label);
  const result = spawnSync(command, args, { encoding: 'utf8', shell: process.platform === 'win32', maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0) {
    process.stdout.write(' failed\n');
    process.stderr.write(output || `${result.error ?? `${command} exited with ${result.status}`}\n`);
    process.stderr.write(`\nhookline: \`${[command, ...args].join(' ')}\` failed (output above).\n`);
    process.exit(1);
  }
  finished(since);
  return output;
}

/** Repeats what pnpm warned about (the rest of its output is progress), so nothing is hidden. */
function reportPnpmWarnings(output) {
  for (const line of output.split('\n')) {
    if (/^\s*WARN\b/.test(line)) console.log(`  pnpm: ${line.trim()}`);
  }
  // pnpm draws this note in a box: "Ignored build scripts: a@1.0.0, b@2.0.0. Run "pnpm approve-builds" …".
  const ignored = /Ignored build scripts:(.*?)Run "pnpm approve-builds"/s.exec(output);
  if (ignored) {
    const names = ignored[1]
      .replace(/[│\s]+/g, ' ')
      .trim()
      .replace(/\.$/, '');
    console.log(
      `  pnpm did not run the install scripts of ${names}: list each in package.json "pnpm.onlyBuiltDependencies" (needs it) or "pnpm.ignoredBuiltDependencies" (does not).`,
    );
  }
}

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`hookline needs Node.js 20 or newer; this is ${process.version}.`);
  process.exit(1);
}

// The pnpm of package.json's "packageManager" (what `corepack enable` runs too). Any pnpm 10 already
// installed is kept: pnpm itself switches to the pinned version when they differ.
const pinnedPnpm = JSON.parse(readFileSync('package.json', 'utf8')).packageManager.replace(/^pnpm@/, '');
const pnpmVersion = spawnSync('pnpm', ['--version'], { encoding: 'utf8', shell: process.platform === 'win32' });
if (pnpmVersion.status !== 0 || !pnpmVersion.stdout.trim().startsWith('10.')) {
  step(`installing pnpm ${pinnedPnpm} (npm i -g pnpm@${pinnedPnpm})`, 'npm', ['i', '-g', `pnpm@${pinnedPnpm}`]);
}

/** Every package under packages/, with its manifest. */
const packages = readdirSync('packages')
  .filter((name) => existsSync(join('packages', name, 'package.json')))
  .map((name) => ({ dir: join('packages', name), manifest: JSON.parse(readFileSync(join('packages', name, 'package.json'), 'utf8')) }));

/** Newest modification time under `path` (files only), 0 when absent. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** Whether a package's dist/ is missing or older than its sources. */
function stale({ dir }) {
  const entry = join(dir, 'dist', 'index.js');
  const built = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  return built < Math.max(newest(join(dir, 'src')), newest(join(dir, 'package.json')));
}

/** The given packages and the workspace packages they depend on, transitively. */
function withDependencies(selected) {
  const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg]));
  const found = new Set();
  const visit = (pkg) => {
    if (found.has(pkg)) return;
    found.add(pkg);
    const { dependencies = {}, devDependencies = {}, peerDependencies = {} } = pkg.manifest;
    for (const name of Object.keys({ ...dependencies, ...devDependencies, ...peerDependencies })) {
      const dependency = byName.get(name);
      if (dependency) visit(dependency);
    }
  };
  selected.forEach(visit);
  return [...found];
}

/** Builds the packages (pnpm orders them so a dependency is built before its dependants). */
function build(selected, why) {
  const names = selected.map((pkg) => pkg.manifest.name);
  const filters = names.flatMap((name) => ['--filter', name]);
  step(`building ${names.join(', ')} (${why})`, 'pnpm', ['--silent', ...filters, 'run', 'build']);
}

// `pnpm install` is quick when nothing changed; skip it when an install for this lockfile is present.
if (!existsSync('node_modules/.modules.yaml') || process.env.HOOKLINE_FORCE_INSTALL) {
  const commands = packages.filter((pkg) => pkg.manifest.bin !== undefined);
  const root = JSON.parse(readFileSync('package.json', 'utf8')).name;
  const needed = withDependencies(commands).filter(stale);
  if (needed.length > 0) {
    const first = step('installing the packages (pnpm install --frozen-lockfile, first pass)', 'pnpm', [
      'install',
      '--frozen-lockfile',
      '--filter',
      root,
      '--filter',
      './packages/*',
    ]);
    reportPnpmWarnings(first);
    const bins = commands.flatMap((pkg) => (typeof pkg.manifest.bin === 'string' ? [pkg.manifest.name] : Object.keys(pkg.manifest.bin)));
    build(needed, `before the rest is installed, so pnpm can link ${bins.map((bin) => `\`${bin}\``).join(', ')} from dist/`);
  }
  reportPnpmWarnings(step('installing dependencies (pnpm install --frozen-lockfile)', 'pnpm', ['install', '--frozen-lockfile']));
}

if (process.argv.includes('--build')) {
  const outdated = packages.filter(stale);
  if (outdated.length > 0) build(outdated, 'not built, or older than their sources');
}
