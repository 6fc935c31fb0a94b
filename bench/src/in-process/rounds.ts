import type { SignedBody } from '../lib/payloads';
import type { Contender } from './competitors';

/** Runs passes over `inputs` until `slotMs` has passed; returns nanoseconds per delivery. */
async function slot(contender: Contender, inputs: readonly unknown[], slotMs: number): Promise<number> {
  let calls = 0;
  let elapsed = 0n;
  const budget = BigInt(slotMs) * 1_000_000n;
  while (elapsed < budget) {
    contender.reset?.();
    const start = process.hrtime.bigint();
    for (const input of inputs) {
      const result = contender.run(input);
      if (result !== undefined) await result;
    }
    elapsed += process.hrtime.bigint() - start;
    calls += inputs.length;
  }
  return Number(elapsed) / calls;
}

/**
 * Times every contender for `slotMs` per round, one warm-up round then `rounds` measured ones, the
 * order rotating every round, each round on a fresh `pool()` (fresh bodies and timestamps: svix,
 * standardwebhooks and stripe refuse stale ones). Returns each contender's nanoseconds per delivery,
 * one figure per round, in the contenders' order.
 */
export async function interleavedRounds(
  all: readonly Contender[],
  pool: () => readonly SignedBody[],
  rounds: number,
  slotMs: number,
): Promise<number[][]> {
  const samples = all.map((): number[] => []);
  for (let round = -1; round < rounds; round++) {
    const bodies = pool();
    const prepared = all.map((c) => c.prepare(bodies));
    for (let i = 0; i < all.length; i++) {
      const index = (i + Math.max(0, round)) % all.length;
      const nsPerCall = await slot(all[index] as Contender, prepared[index] as unknown[], slotMs);
      if (round >= 0) samples[index]?.push(nsPerCall); // round -1 warms up
    }
  }
  return samples;
}
