// Packs every publishable package (packages/*) with `pnpm pack`, the way `changeset publish` will:
// `workspace:^` ranges become real versions and `files` decides what ships. Shared by
// scripts/check-packages.mjs (publint + attw) and test/packaging (install the tarballs and run them);
// run directly (`pnpm pack:all`), it packs everything into one folder for installing elsewhere.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);

/** The monorepo root. */
export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Every package folder under packages/ with a package.json that is not private, sorted by folder name. */
export function listPackages(root = ROOT) {
  const base = join(root, 'packages');
  return readdirSync(base, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(base, entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(base, entry.name);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return { folder: entry.name, dir, name: manifest.name, manifest };
    })
    .filter((pkg) => !pkg.manifest.private)
    .sort((a, b) => a.folder.localeCompare(b.folder));
}

/** Every file path a package.json points at (exports targets except the source condition, main, module, types, bin). */
export function manifestTargets(manifest) {
  const targets = new Set();
  const walk = (value, condition) => {
    if (typeof value === 'string') {
      // `@hookline/source` points at src/, which is checked as a shipped file separately.
      if (condition !== '@hookline/source' && !value.includes('*')) targets.add(value);
    } else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) walk(inner, key);
    }
  };
  walk(manifest.exports);
  for (const field of ['main', 'module', 'types', 'typings']) walk(manifest[field]);
  walk(typeof manifest.bin === 'string' ? { bin: manifest.bin } : manifest.bin);
  return [...targets].map((target) => target.replace(/^\.\//, ''));
}

/** The build outputs a package points at that are missing on disk (empty when it is built). */
export function missingBuildFiles(pkg) {
  return manifestTargets(pkg.manifest).filter((target) => !existsSync(join(pkg.dir, target)));
}

/**
 * Packs one package into `destination` and returns the tarball's absolute path. `pnpm pack` (not
 * `npm pack`) because only pnpm rewrites `workspace:^` to the version being published.
 */
export async function packPackage(pkg, destination) {
  const { stdout } = await run('pnpm', ['pack', '--json', '--pack-destination', destination], {
    cwd: pkg.dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  // pnpm 10 prints one JSON object; older ones printed the path as the last line.
  const start = stdout.indexOf('{');
  const filename = start >= 0 ? JSON.parse(stdout.slice(start)).filename : stdout.trim().split('\n').pop();
  return resolve(destination, filename);
}

/**
 * Packs the packages with one recursive `pnpm pack` (the same packing as packPackage, without a
 * pnpm start-up per package: about a tenth of the CPU); resolves to the packages with their `tarball` paths.
 */
export async function packAll(destination, packages = listPackages()) {
  if (packages.length === 0) return [];
  const filters = packages.flatMap((pkg) => ['--filter', pkg.name]);
  const { stdout } = await run('pnpm', ['--recursive', ...filters, 'pack', '--json', '--pack-destination', destination], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const start = stdout.search(/[[{]/);
  const report = start >= 0 ? JSON.parse(stdout.slice(start)) : [];
  const tarballs = new Map((Array.isArray(report) ? report : [report]).map((entry) => [entry.name, resolve(destination, entry.filename)]));
  return packages.map((pkg) => {
    const tarball = tarballs.get(pkg.name);
    if (tarball === undefined) throw new Error(`pnpm pack did not pack ${pkg.name}:\n${stdout.slice(0, 2000)}`);
    return { ...pkg, tarball };
  });
}

/** The packages that are tools of development and tests: a project installs them with `-D`. */
export const DEVELOPMENT_PACKAGES = ['@hookline/cli', '@hookline/testing'];

/**
 * The packages that `names` need installed, each after the `@hookline` packages it depends on (so
 * core first): the named ones and everything they depend on, in an order npm accepts.
 */
export function withDependencies(packages, names) {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  const unknown = names.filter((name) => !byName.has(name));
  if (unknown.length > 0) {
    throw new Error(`No package ${unknown.join(', ')} here. The packages: ${packages.map((pkg) => pkg.name).join(', ')}.`);
  }
  const ordered = [];
  const visit = (name) => {
    const pkg = byName.get(name);
    if (pkg === undefined || ordered.includes(pkg)) return;
    for (const dependency of Object.keys(pkg.manifest.dependencies ?? {})) visit(dependency);
    ordered.push(pkg);
  };
  for (const name of names) visit(name);
  return ordered;
}

/**
 * The `npm install` commands that install `names` from their tarballs (`packed` has each package's
 * `tarball`) into another project, dependencies included: one line for what the app runs, and one with
 * `-D` for the development tools (the CLI, the testing kit) and what only they need, after it. A
 * package depends on the others at exactly their version, which no registry has before a release, so
 * each line names every tarball it needs that an earlier line did not install.
 */
export function installCommands(packed, names) {
  const runtime = withDependencies(
    packed,
    names.filter((name) => !DEVELOPMENT_PACKAGES.includes(name)),
  );
  const development = withDependencies(packed, names).filter((pkg) => !runtime.includes(pkg));
  return [
    ...(runtime.length > 0 ? [`npm install ${runtime.map((pkg) => pkg.tarball).join(' ')}`] : []),
    ...(development.length > 0 ? [`npm install -D ${development.map((pkg) => pkg.tarball).join(' ')}`] : []),
  ];
}

/**
 * `pnpm pack:all [folder] [-- @hookline/<name>…]`: packs every package into one folder (default
 * `packed/`) and prints the `npm install` commands that install the named packages, with every
 * `@hookline` package they depend on, into another project: for trying hookline from a clone before
 * (or instead of) a release.
 */
async function main() {
  const args = process.argv.slice(2).filter((arg) => arg !== '--');
  const names = args.filter((arg) => arg.startsWith('@hookline/'));
  const folders = args.filter((arg) => !arg.startsWith('@hookline/'));
  if (folders.length > 1) {
    console.error(`pnpm pack:all takes one folder to pack into, and package names (@hookline/…): got ${folders.join(', ')}`);
    process.exit(1);
  }
  const destination = resolve(folders[0] ?? join(ROOT, 'packed'));
  const packages = listPackages();
  try {
    withDependencies(packages, names);
  } catch (error) {
    console.error(`pnpm pack:all: ${error.message}`);
    process.exit(1);
  }
  const unbuilt = packages.filter((pkg) => missingBuildFiles(pkg).length > 0);
  if (unbuilt.length > 0) {
    console.error(`Not built: ${unbuilt.map((pkg) => pkg.name).join(', ')}. Run \`pnpm build\` first (\`pnpm pack:all\` does).`);
    process.exit(1);
  }
  mkdirSync(destination, { recursive: true });
  const packed = await packAll(destination, packages);
  console.log(`Packed ${packed.length} packages into ${destination}:`);
  for (const pkg of packed) console.log(`  ${pkg.name.padEnd(20)} ${basename(pkg.tarball)}`);
  if (names.length === 0) {
    console.log('\nName the packages you use to get the commands that install them with what they depend on, e.g.');
    console.log('`pnpm pack:all -- @hookline/express @hookline/postgres`. For @hookline/express:');
  } else {
    console.log(`\nInstall ${names.join(', ')} with what they depend on, in your project's folder:`);
  }
  for (const command of installCommands(packed, names.length > 0 ? names : ['@hookline/express'])) console.log(`  ${command}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
