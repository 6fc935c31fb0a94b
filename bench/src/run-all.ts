/**
 * `pnpm bench`: runs every suite under bench/src and writes bench/RESULTS.md.
 *
 * The convention (bench/README.md): a suite is a folder `bench/src/<name>/` with a `suite.ts` that
 * prints one markdown section (starting with a `## ` heading) to stdout and exits 0; progress and
 * noise go to stderr. Suites run one after another (never in parallel: they share the cores), each
 * in its own process, in the order below and then any other folder alphabetically. A suite that
 * fails still leaves the others' sections, with a note in its place.
 *
 *   pnpm bench                       every suite
 *   pnpm bench in-process http-peers only these
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTicks, machineSummary, stolenPercent } from './lib/machine';
import { packageVersion } from './lib/versions';

const src = dirname(fileURLToPath(import.meta.url));
const benchRoot = join(src, '..');
const repoRoot = join(benchRoot, '..');
const ORDER = ['in-process', 'http-peers', 'http', 'stores'];

function suites(only: readonly string[]): string[] {
  const found = readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(src, entry.name, 'suite.ts')))
    .map((entry) => entry.name)
    .sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b));
  return only.length === 0 ? found : found.filter((name) => only.includes(name));
}

/**
 * Benchmarks measure what users install: the built packages. When the build fails (a package half
 * way through someone's change), fall back to the sources and say so in RESULTS.md.
 */
function buildPackages(): { conditions: string[]; note: string } {
  process.stderr.write('> pnpm build (benchmarks run against the built dist/)\n');
  const build = spawnSync('pnpm', ['-r', '--filter', './packages/*', 'run', 'build'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status === 0) return { conditions: [], note: 'the built packages (dist/, as published)' };
  process.stderr.write('! the build failed: running against the sources (src/ through tsx)\n');
  return {
    conditions: ['--conditions=@hookline/source'],
    note: 'the sources (src/ through tsx: the build failed at the time of this run)',
  };
}

function runSuite(name: string, conditions: readonly string[]): Promise<{ ok: boolean; markdown: string; seconds: number }> {
  const started = Date.now();
  process.stderr.write(`> suite ${name}\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', ...conditions, join(src, name, 'suite.ts')], {
    cwd: benchRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      const ok = code === 0 && out.trim().length > 0;
      resolve({
        ok,
        seconds,
        markdown: ok ? out.trim() : `## ${name}\n\n_This suite failed (exit code ${code}); see the console output of \`pnpm bench\`._`,
      });
    });
  });
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const list = suites(only);
  if (list.length === 0) throw new Error(`no suite matches ${only.join(', ')}; suites are bench/src/<name>/suite.ts`);
  const { conditions, note } = buildPackages();
  const machine = machineSummary();
  const startedAt = new Date();
  const sections: string[] = [];
  const timings: string[] = [];
  const stolen: string[] = [];
  let failed = 0;
  for (const name of list) {
    const before = cpuTicks();
    const result = await runSuite(name, conditions);
    if (!result.ok) failed++;
    sections.push(result.markdown);
    timings.push(`${name} ${result.seconds} s`);
    stolen.push(`${name} ${stolenPercent(before, cpuTicks())}`);
  }
  const header = [
    '# hookline benchmark results',
    '',
    '_Written by `pnpm bench` (bench/src/run-all.ts); do not edit by hand. Re-run it on your machine: figures are only comparable within one run._',
    '',
    `- Date: ${startedAt.toISOString()} (took ${timings.join(', ')})`,
    `- Machine: ${machine.nproc} cores (\`nproc\`), ${machine.cpu}, ${machine.memoryGiB} GiB, ${machine.platform}`,
    `- Node.js ${machine.node}; @hookline/core ${packageVersion('@hookline/core')}, measured on ${note}`,
    `- Suites: ${list.join(', ')}`,
    // A virtual machine's neighbours: a suite with more than a few percent here ran slower throughout,
    // and its ratios are noisier (the contenders of a round no longer had the same machine).
    `- CPU time the hypervisor gave other guests while each suite ran (steal, /proc/stat): ${stolen.join(', ')}`,
    '',
    'Ratios compare contenders measured in the same run, interleaved; absolute figures move with the machine and its load.',
    '',
  ].join('\n');
  writeFileSync(join(benchRoot, 'RESULTS.md'), `${header}\n${sections.join('\n\n')}\n`);
  process.stderr.write(`> wrote bench/RESULTS.md (${list.length} suites, ${failed} failed)\n`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
