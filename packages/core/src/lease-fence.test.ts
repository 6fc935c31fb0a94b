// The handler's fence. When the heartbeat finds a lease gone (it lapsed, and another receiver may be
// running the same handlers), the handler's `context.signal` is aborted with a LeaseLostError, so a
// handler that checks it stops before it writes over the newer run; and `context.fencingToken` (the
// store's claim count) is larger for every later run, for the writes a handler fences itself. Two
// receivers share one store whose clock jumps past the first one's lease, as when a process is paused.
// (test/exactly-once/lease-fence.test.ts does the same across processes, paused with SIGSTOP, on the
// Redis and Postgres stores.)
import { describe, expect, it } from 'vitest';
import type { HandlerContext } from './context';
import { LeaseLostError } from './errors';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, SECRET, signed, tick } from './test-support';

/** A memory store on a clock the test moves, answering with promises as every shared store does. */
function sharedStore() {
  let now = Date.now();
  const inner = memoryStore({ now: () => now });
  const store: IdempotencyStore = {
    claim: async (key, token, leaseMs) => inner.claim(key, token, leaseMs),
    complete: async (key, token, retentionMs) => inner.complete(key, token, retentionMs),
    release: async (key, token) => inner.release(key, token),
    extend: async (key, token, leaseMs) => inner.extend(key, token, leaseMs),
    readVersion: async (key) => inner.readVersion?.(key),
    advanceVersion: async (key, version, retentionMs) => inner.advanceVersion?.(key, version, retentionMs) ?? false,
  };
  return { store, jump: (ms: number) => (now += ms) };
}

/** The same store with a transaction(): the work, then the completion, as a SQL store commits them together. */
function withTransactions(store: IdempotencyStore): IdempotencyStore {
  return {
    ...store,
    async transaction(work, completion) {
      const value = await work({ connection: 'tx' });
      return { value, completed: await store.complete(completion.key, completion.token, completion.retentionMs) };
    },
  };
}

/** A handler that waits until its signal aborts (or the test lets it go), then reports what it saw. */
function waitingHandler(seen: { tokens: number[]; reasons: unknown[] }, release: Promise<void>) {
  return async (_delivery: unknown, context: HandlerContext) => {
    seen.tokens.push(context.fencingToken);
    if (seen.tokens.length > 1) return; // the run that took over finishes at once
    const aborted = new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.race([aborted, release]);
    seen.reasons.push(context.signal.reason);
    context.signal.throwIfAborted(); // a handler that honours its fence writes nothing
  };
}

const OPTIONS = {
  plain: undefined,
  'named, with its own record': { name: 'audit' },
  'under an ordering guard': { name: 'ordered', order: { key: () => 'resource-1', version: () => 1 } },
  transactional: { name: 'saved', transactional: true },
} as const;

describe.each(Object.entries(OPTIONS))('a handler (%s) whose lease is lost', (kind, options) => {
  it('has its signal aborted with a LeaseLostError naming the key, and a later run holds a larger fencing token', async () => {
    const { store, jump } = sharedStore();
    const shared = kind === 'transactional' ? withTransactions(store) : store;
    const completion = kind === 'plain' ? 'delivery' : 'handler';
    const receivers = [0, 1].map(() => createReceiver({ secret: SECRET, store: shared, leaseMs: 300, completion, logger: false }));
    const reports = receivers.map((receiver) => {
      const errors: unknown[] = [];
      receiver.onError((error) => void errors.push(error));
      return errors;
    });
    const seen = { tokens: [] as number[], reasons: [] as unknown[] };
    let letGo!: () => void;
    const release = new Promise<void>((resolve) => (letGo = resolve));
    for (const receiver of receivers) receiver.on('message.delivered', waitingHandler(seen, release), options as never);
    const input = signed(envelope());
    const first = receivers[0]!.handle(input);
    await tick(20);
    jump(60_000); // the first receiver's lease lapses, as if it had been paused
    expect((await receivers[1]!.handle(input)).status).toBe(200); // takes over and finishes
    await tick(250); // the first receiver's next heartbeat finds its lease gone
    letGo();
    expect((await first).status).toBe(500); // it stopped: its handler threw the abort reason
    expect(seen.tokens).toEqual([1, 2]);
    expect(seen.reasons).toHaveLength(1);
    const reason = seen.reasons[0];
    expect(LeaseLostError.is(reason)).toBe(true);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((reason as LeaseLostError).name).toBe('LeaseLostError');
    expect((reason as LeaseLostError).message).toMatch(
      /^hookline: lost the lease on .* while its handlers ran: another attempt may be running them now/,
    );
    expect(reports[0]).toContainEqual(reason);
    expect(reports[1]).toEqual([]);
  });
});

describe('the fencing token', () => {
  it('is the claim count: 1, then 2 on a retry after a failure, the same as context.attempt', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    receiver.onError(() => {});
    const tokens: [number, number][] = [];
    receiver.on('message.delivered', (_delivery, context) => {
      tokens.push([context.fencingToken, context.attempt]);
      if (tokens.length === 1) throw new Error('first try fails');
    });
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(500);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(tokens).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });
});
