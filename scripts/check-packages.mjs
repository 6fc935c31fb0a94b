// `pnpm check:packages`: is every package in packages/* publishable as it stands?
//   1. its build is there (every file package.json points at exists: run `pnpm build` first);
//   2. `exports["."]` starts with the `@hookline/source` condition and the file it names ships;
//   3. publint finds no error or warning in the packed tarball (suggestions are printed, not fatal);
//   4. no third-party code is bundled into dist (tsup inlines any import that is not a dependency or
//      peerDependency: a missing peer ships a private copy of, say, vitest; read from the sourcemaps);
//   5. @arethetypeswrong/cli finds no problem for the node16 profile (ESM and CJS consumers under
//      moduleResolution node16, plus bundler; node10 is ignored because subpath exports cannot work
//      there without typesVersions, and TypeScript itself calls that mode legacy).
// The tarballs come from `pnpm pack`, the same bytes `changeset publish` uploads. Exits 1 on any finding.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { listPackages, missingBuildFiles, packAll, ROOT } from './pack-packages.mjs';

const run = promisify(execFile);
const SOURCE_CONDITION = '@hookline/source';

/** The files a tarball holds, relative to its `package/` folder. */
async function tarballFiles(tarball) {
  const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 });
  return new Set(
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/^package\//, '')),
  );
}

async function checkSourceCondition(pkg) {
  const root = pkg.manifest.exports?.['.'];
  if (!root || typeof root !== 'object') return [`exports["."] must be an object of conditions (${SOURCE_CONDITION} first)`];
  const keys = Object.keys(root);
  if (keys[0] !== SOURCE_CONDITION) return [`exports["."] must start with "${SOURCE_CONDITION}" (it starts with "${keys[0]}")`];
  const files = await tarballFiles(pkg.tarball);
  const problems = [];
  // Every subpath's source condition must name a file that ships, or it would dangle for anyone who sets it.
  for (const [subpath, entry] of Object.entries(pkg.manifest.exports)) {
    const target = entry && typeof entry === 'object' ? entry[SOURCE_CONDITION] : undefined;
    if (typeof target === 'string' && !files.has(target.replace(/^\.\//, ''))) {
      problems.push(
        `exports["${subpath}"]["${SOURCE_CONDITION}"] points at ${target}, which the tarball does not contain (add it to "files")`,
      );
    }
  }
  return problems;
}

/** The npm packages whose code ended up inside the build, according to the shipped sourcemaps. */
async function checkBundledDependencies(pkg) {
  const files = await tarballFiles(pkg.tarball);
  const bundled = new Set();
  for (const file of files) {
    if (!file.endsWith('.map')) continue;
    const { sources = [] } = JSON.parse(readFileSync(join(pkg.dir, file), 'utf8'));
    for (const source of sources) {
      const match = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(source);
      if (match?.[1]) bundled.add(match[1]);
    }
  }
  return [...bundled]
    .sort()
    .map((name) => `dist bundles a copy of "${name}": declare it in dependencies or peerDependencies so tsup keeps it external`);
}

async function runPublint(pkg) {
  const tarball = readFileSync(pkg.tarball);
  const { messages, pkg: manifest } = await publint({
    // No pkgDir: with a tarball publint takes the root folder inside it, so it lints what ships.
    pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
    level: 'suggestion',
    strict: true,
  });
  const lines = messages.map((message) => `${message.type}: ${formatMessage(message, manifest, { color: false }) ?? message.code}`);
  return { failures: lines.filter((line) => !line.startsWith('suggestion')), notes: lines.filter((line) => line.startsWith('suggestion')) };
}

async function runAttw(pkg) {
  const attw = join(ROOT, 'node_modules', '.bin', 'attw');
  const args = [pkg.tarball, '--profile', 'node16', '--no-definitely-typed', '--format', 'table', '--no-color', '--no-emoji'];
  try {
    await run(attw, args, { env: { ...process.env, FORCE_COLOR: '0' }, maxBuffer: 16 * 1024 * 1024 });
    return [];
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    return [`attw:\n${output || error.message}`];
  }
}

async function main() {
  const packages = listPackages();
  const unbuilt = packages.map((pkg) => ({ pkg, missing: missingBuildFiles(pkg) })).filter(({ missing }) => missing.length > 0);
  if (unbuilt.length > 0) {
    for (const { pkg, missing } of unbuilt) console.error(`${pkg.name}: not built (missing ${missing.join(', ')})`);
    console.error('Run `pnpm build` first.');
    process.exit(1);
  }

  const destination = mkdtempSync(join(tmpdir(), 'hookline-check-'));
  let failed = 0;
  try {
    const packed = await packAll(destination, packages);
    const results = await Promise.all(
      packed.map(async (pkg) => {
        const [source, bundled, lint, types] = await Promise.all([
          checkSourceCondition(pkg),
          checkBundledDependencies(pkg),
          runPublint(pkg),
          runAttw(pkg),
        ]);
        return { pkg, failures: [...source, ...bundled, ...lint.failures, ...types], notes: lint.notes };
      }),
    );
    for (const { pkg, failures, notes } of results) {
      console.log(`${failures.length === 0 ? 'ok  ' : 'FAIL'} ${pkg.name}`);
      for (const line of [...failures, ...notes]) console.log(`     ${line.replaceAll('\n', '\n     ')}`);
      if (failures.length > 0) failed += 1;
    }
  } finally {
    rmSync(destination, { recursive: true, force: true });
  }
  console.log(
    failed === 0 ? `publint + attw: all ${packages.length} packages clean` : `publint + attw: ${failed} package(s) with problems`,
  );
  process.exit(failed === 0 ? 0 : 1);
}

await main();
