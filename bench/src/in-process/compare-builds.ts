/**
 * Times the full receive of two builds of @hookline/core in one process, interleaved, against the
 * floor: the workspace's own build (packages/core/dist) and another one, such as a copy of dist/ with
 * one thing edited, or the dist/ of another commit. A change of a percent or two is invisible across
 * two runs of the suite (the machine drifts more than that between runs) but shows here, as the
 * median of the per-round ratios.
 *
 *   cp -r packages/core/dist /tmp/core-b && $EDITOR /tmp/core-b/index.js
 *   cd bench && npx tsx src/in-process/compare-builds.ts /tmp/core-b
 *
 * HOOKLINE_COMPARE_ROUNDS (default 16) and HOOKLINE_BENCH_SLOT_MS (default 120) trade time for
 * precision; differences under about 1% are noise. Not part of `pnpm bench`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PAYLOAD_SIZES, signedPool } from '../lib/payloads';
import { formatMeasuredRatio, formatNumber, markdownTable, median, medianRoundRatio, spreadPercent } from '../lib/stats';
import { type Contender, type CoreBuild, floor, hooklineReceive } from './competitors';
import { interleavedRounds } from './rounds';

const ROUNDS = Number(process.env.HOOKLINE_COMPARE_ROUNDS ?? 16);
const SLOT_MS = Number(process.env.HOOKLINE_BENCH_SLOT_MS ?? 120);

/**
 * Loads the other build from a copy under bench/node_modules, where tsx leaves JavaScript as it is.
 * tsx compiles what it loads from elsewhere: a copy of the workspace's build loaded from /tmp measured
 * about 4% slower than the workspace's build, a copy loaded from under node_modules 0.99×.
 */
async function loadBuild(dir: string): Promise<{ build: CoreBuild; remove: () => void }> {
  const bench = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const copy = mkdtempSync(join(bench, 'node_modules', '.compare-builds-'));
  cpSync(resolve(dir), copy, { recursive: true });
  const remove = () => rmSync(copy, { recursive: true, force: true });
  try {
    return { build: (await import(pathToFileURL(join(copy, 'index.js')).href)) as CoreBuild, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

async function main(): Promise<void> {
  const otherDir = process.argv[2];
  if (otherDir === undefined) throw new Error('usage: compare-builds.ts <directory of another @hookline/core dist/ build>');
  const { build: other, remove } = await loadBuild(otherDir);
  process.on('exit', remove);
  if (typeof other.createReceiver !== 'function' || typeof other.memoryStore !== 'function') {
    throw new Error(`${otherDir}/index.js does not export createReceiver and memoryStore: give the dist/ directory of @hookline/core`);
  }
  const size = PAYLOAD_SIZES.find((s) => s.name === '1 KB') as (typeof PAYLOAD_SIZES)[number];
  const all: Contender[] = [floor, hooklineReceive(undefined, 'A: packages/core/dist'), hooklineReceive(other, `B: ${otherDir}`)];
  const samples = await interleavedRounds(all, () => signedPool(size.event, size.bytes, 2048), ROUNDS, SLOT_MS);
  const [floorNs, a, b] = samples as [number[], number[], number[]];
  const rows = all.map((contender, i) => {
    const values = samples[i] as number[];
    return [
      contender.name,
      formatNumber(median(values) / 1000, 2),
      `±${spreadPercent(values).toFixed(1)}%`,
      formatMeasuredRatio(medianRoundRatio(values, floorNs)),
    ];
  });
  process.stdout.write(
    `${markdownTable(['contender (1 KB)', 'µs / delivery (median)', 'spread', 'vs floor'], rows)}\n\nB / A, the median of the per-round ratios: ${medianRoundRatio(b, a).toFixed(4)} (${ROUNDS} rounds)\n`,
  );
}

await main();
