import type { Contender } from './competitors';

/** Runs passes over `inputs` until `slotMs` has passed; returns nanoseconds per delivery. */
export async function slot(contender: Contender, inputs: readonly unknown[], slotMs: number): Promise<number> {
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
