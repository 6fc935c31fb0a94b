/**
 * Instructions per request of the HTTP suite's servers (server.ts), counted by valgrind's callgrind:
 * `npx tsx src/http/instructions.ts [framework…]` from bench/ (express by default; needs `apt-get
 * install valgrind`) counts `<framework>-baseline` and `<framework>-hookline` for each framework
 * named, and prints each adapter's count against its hand-written handler's. Not a suite, so
 * `pnpm bench` does not run it. How and why it counts: ../lib/callgrind.ts. Every request is the
 * same signed 1 KB delivery; the `hookline` variant registers no handler, so repeats are no duplicates.
 *
 * HOOKLINE_INSTRUCTIONS_SAMPLES (default 5) and HOOKLINE_INSTRUCTIONS_REQUESTS (per sample, default
 * 3000) trade time for precision.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countInstructions, instructionsTable, oneDelivery, requireValgrind } from '../lib/callgrind';

const options = {
  samples: Number(process.env.HOOKLINE_INSTRUCTIONS_SAMPLES ?? 5),
  perSample: Number(process.env.HOOKLINE_INSTRUCTIONS_REQUESTS ?? 3000),
};
const server = join(dirname(fileURLToPath(import.meta.url)), 'server.ts');

requireValgrind('instructions.ts');
const frameworks = process.argv.length > 2 ? process.argv.slice(2) : ['express'];
const delivery = oneDelivery();
for (const framework of frameworks) {
  const results = new Map<string, number[]>();
  for (const variant of ['baseline', 'hookline']) {
    const kind = `${framework}-${variant}`;
    results.set(kind, await countInstructions(kind, server, delivery, options));
  }
  process.stdout.write(`${instructionsTable(results, `${framework}-baseline`)}\n\n`);
}
