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

/**
 * `pnpm pack:all [folder]`: packs every package into one folder (default `packed/`) and prints the
 * `npm install` line that installs them into another project, for trying hookline from a clone before
 * (or instead of) a release. The adapters, stores and tools depend on @hookline/core at this exact
 * version, so core's tarball goes into the same `npm install` as the others.
 */
async function main() {
  const destination = resolve(process.argv[2] ?? join(ROOT, 'packed'));
  const packages = listPackages();
  const unbuilt = packages.filter((pkg) => missingBuildFiles(pkg).length > 0);
  if (unbuilt.length > 0) {
    console.error(`Not built: ${unbuilt.map((pkg) => pkg.name).join(', ')}. Run \`pnpm build\` first (\`pnpm pack:all\` does).`);
    process.exit(1);
  }
  mkdirSync(destination, { recursive: true });
  const packed = await packAll(destination, packages);
  console.log(`Packed ${packed.length} packages into ${destination}:`);
  for (const pkg of packed) console.log(`  ${pkg.name.padEnd(20)} ${basename(pkg.tarball)}`);
  const tarball = (name) => packed.find((pkg) => pkg.name === name)?.tarball;
  console.log('\nInstall @hookline/core together with the packages you use, in one command (they depend on it), e.g.:');
  console.log(`  npm install ${[tarball('@hookline/core'), tarball('@hookline/express')].filter(Boolean).join(' ')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
