/**
 * Instructions per request of the saturation servers (server.ts), counted by valgrind's callgrind:
 * `npx tsx src/saturation/instructions.ts [hand-written] [contract] [bridge] [handle]` from bench/ (all
 * four by default; needs `apt-get install valgrind`). Not a suite, so `pnpm bench` does not run it.
 * How and why it counts: ../lib/callgrind.ts. The requests are the saturation suite's: one signed 1 KB
 * delivery repeated, so every request after the first is a duplicate.
 *
 * HOOKLINE_INSTRUCTIONS_SAMPLES (default 5) and HOOKLINE_INSTRUCTIONS_REQUESTS (per sample, default
 * 3000) trade time for precision.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countInstructions, instructionsTable, oneDelivery, requireValgrind } from '../lib/callgrind';

const KINDS = ['hand-written', 'contract', 'bridge', 'handle'];
const options = {
  samples: Number(process.env.HOOKLINE_INSTRUCTIONS_SAMPLES ?? 5),
  perSample: Number(process.env.HOOKLINE_INSTRUCTIONS_REQUESTS ?? 3000),
};
const server = join(dirname(fileURLToPath(import.meta.url)), 'server.ts');

requireValgrind('instructions.ts');
const asked = process.argv.slice(2);
const unknown = asked.filter((kind) => !KINDS.includes(kind));
if (unknown.length > 0) throw new Error(`unknown server ${unknown.join(', ')}; choose among ${KINDS.join(', ')}`);
const delivery = oneDelivery();
const results = new Map<string, number[]>();
for (const kind of asked.length === 0 ? KINDS : asked) results.set(kind, await countInstructions(kind, server, delivery, options));
process.stdout.write(`${instructionsTable(results, 'hand-written')}\n`);
