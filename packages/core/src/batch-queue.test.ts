import { describe, expect, it } from 'vitest';
import { batchQueue } from './batch-queue';

interface Op {
  key: string;
  group?: number;
  bad?: boolean;
}

/** A batch runner that records every batch and can be held until released. */
function recorder(options: { hold?: boolean; fail?: (items: Op[]) => unknown } = {}) {
  const batches: string[][] = [];
  const releases: Array<() => void> = [];
  let running = 0;
  let mostRunning = 0;
  const run = async (items: Op[]): Promise<string[]> => {
    batches.push(items.map((item) => item.key));
    running++;
    mostRunning = Math.max(mostRunning, running);
    try {
      if (options.hold) await new Promise<void>((resolve) => releases.push(resolve));
      const failure = options.fail?.(items);
      if (failure !== undefined) throw failure;
      return items.map((item) => `done ${item.key}`);
    } finally {
      running--;
    }
  };
  return { run, batches, releases, mostRunning: () => mostRunning };
}

const keyOf = (op: Op) => op.key;
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('batchQueue', () => {
  it('sends what arrives in one turn as one batch, and answers each operation its own result', async () => {
    const { run, batches } = recorder();
    const queued = batchQueue({ run, keyOf, maxSize: 10, concurrency: 2 });
    const results = await Promise.all(['a', 'b', 'c'].map((key) => queued({ key })));
    expect(results).toEqual(['done a', 'done b', 'done c']);
    expect(batches).toEqual([['a', 'b', 'c']]);
  });

  it('sends an operation alone, in the turn it arrived, when nothing else is waiting', async () => {
    const { run, batches } = recorder();
    const queued = batchQueue({ run, keyOf, maxSize: 10, concurrency: 1 });
    expect(await queued({ key: 'a' })).toBe('done a');
    expect(await queued({ key: 'b' })).toBe('done b');
    expect(batches).toEqual([['a'], ['b']]);
  });

  it('keeps a repeated key, another group and what exceeds maxSize for later batches, in order', async () => {
    const { run, batches } = recorder();
    const queued = batchQueue({ run, keyOf, groupOf: (op) => op.group, maxSize: 2, concurrency: 1 });
    const ops: Op[] = [
      { key: 'a', group: 1 },
      { key: 'a', group: 1 },
      { key: 'b', group: 2 },
      { key: 'c', group: 1 },
      { key: 'd', group: 1 },
    ];
    const results = await Promise.all(ops.map((op) => queued(op)));
    expect(results).toEqual(['done a', 'done a', 'done b', 'done c', 'done d']);
    expect(batches).toEqual([['a', 'c'], ['a', 'd'], ['b']]);
  });

  it('runs at most `concurrency` batches at once; what arrives meanwhile leaves together when one comes back', async () => {
    const held = recorder({ hold: true });
    const queued = batchQueue({ run: held.run, keyOf, maxSize: 10, concurrency: 1 });
    const first = queued({ key: 'a' });
    await turn();
    const later = ['b', 'c', 'd'].map((key) => queued({ key }));
    await turn();
    await turn();
    expect(held.batches).toEqual([['a']]);
    held.releases.shift()?.();
    expect(await first).toBe('done a');
    while (held.batches.length < 2) await turn();
    held.releases.shift()?.();
    expect(await Promise.all(later)).toEqual(['done b', 'done c', 'done d']);
    expect(held.batches).toEqual([['a'], ['b', 'c', 'd']]);
    expect(held.mostRunning()).toBe(1);
  });

  it('rejects every operation of a batch that failed', async () => {
    const broken = new Error('connection lost');
    const { run } = recorder({ fail: () => broken });
    const queued = batchQueue({ run, keyOf, maxSize: 10, concurrency: 1 });
    const outcomes = await Promise.allSettled([queued({ key: 'a' }), queued({ key: 'b' })]);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: broken },
      { status: 'rejected', reason: broken },
    ]);
  });

  it("tries a batch's operations one by one after an item fault, so one bad item fails only itself", async () => {
    const itemFault = new Error('invalid byte sequence');
    const { run, batches } = recorder({ fail: (items) => (items.some((item) => item.bad) ? itemFault : undefined) });
    const queued = batchQueue({ run, keyOf, maxSize: 10, concurrency: 4, isItemFault: (error) => error === itemFault });
    const outcomes = await Promise.allSettled([queued({ key: 'a' }), queued({ key: 'b', bad: true }), queued({ key: 'c' })]);
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'done a' },
      { status: 'rejected', reason: itemFault },
      { status: 'fulfilled', value: 'done c' },
    ]);
    expect(batches).toEqual([['a', 'b', 'c'], ['a'], ['b'], ['c']]);
  });

  it('without isItemFault, an item fault fails the whole batch', async () => {
    const itemFault = new Error('invalid byte sequence');
    const { run, batches } = recorder({ fail: (items) => (items.some((item) => item.bad) ? itemFault : undefined) });
    const queued = batchQueue({ run, keyOf, maxSize: 10, concurrency: 4 });
    const outcomes = await Promise.allSettled([queued({ key: 'a' }), queued({ key: 'b', bad: true })]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(batches).toEqual([['a', 'b']]);
  });
});
