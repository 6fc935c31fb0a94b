// Leases as the receiver holds them: on a store that answers with promises (every shared store does),
// renewed while the handlers run, lost to another receiver once they lapse, and reported when lost.
import { describe, expect, it, vi } from 'vitest';
import type { ErrorInfo } from './hooks';
import { memoryStore } from './memory-store';
import { createReceiver, type Receiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, json, signed, SECRET, tick } from './test-support';

/** The same store behind promises, as the Redis and PostgreSQL stores answer. */
function asyncStore(inner: IdempotencyStore): IdempotencyStore {
  return {
    claim: async (key, token, leaseMs) => inner.claim(key, token, leaseMs),
    complete: async (key, token, retentionMs) => inner.complete(key, token, retentionMs),
    release: async (key, token) => inner.release(key, token),
    extend: async (key, token, leaseMs) => inner.extend(key, token, leaseMs),
  };
}

/** A promise and the function that resolves it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

function errorsOf(receiver: Pick<Receiver, 'onError'>) {
  const errors: { message: string; info: ErrorInfo }[] = [];
  receiver.onError((error, info) => {
    errors.push({ message: error instanceof Error ? error.message : String(error), info });
  });
  return errors;
}

const stores = {
  'a synchronous store (memory)': (store: IdempotencyStore) => store,
  'an asynchronous store (claim().then(run), as Redis and PostgreSQL)': asyncStore,
};

describe.each(Object.entries(stores))('on %s', (_name, wrap) => {
  it('runs a delivery once, answers its retry as a duplicate, and retries a failure with the attempt counted', async () => {
    const receiver = createReceiver({ secret: SECRET, store: wrap(memoryStore()) });
    const attempts: number[] = [];
    let fail = true;
    receiver.on('message.delivered', (_delivery, { attempt }) => {
      attempts.push(attempt);
      if (fail) throw new Error('database down');
    });
    receiver.onError(() => {});
    const input = signed(envelope());
    const failed = await receiver.handle(input);
    expect(failed.status).toBe(500);
    fail = false;
    expect(json(await receiver.handle(input))).toEqual({ ok: true });
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(attempts).toEqual([1, 2]);
  });

  it('lets one of several concurrent copies run; the others get 409 with Retry-After', async () => {
    const receiver = createReceiver({ secret: SECRET, store: wrap(memoryStore()) });
    const running = gate();
    let runs = 0;
    receiver.on('message.delivered', async () => {
      runs += 1;
      await running.opened;
    });
    const input = signed(envelope());
    const first = receiver.handle(input);
    await tick(5);
    const copies = await Promise.all([receiver.handle(input), receiver.handle(input), receiver.handle(input)]);
    expect(copies.map((answer) => answer.status)).toEqual([409, 409, 409]);
    expect(copies.map((answer) => answer.headers['retry-after'])).toEqual(['30', '30', '30']);
    running.open();
    expect((await first).status).toBe(200);
    expect(runs).toBe(1);
  });

  it("heartbeats keep a long handler's lease: a copy sent well after leaseMs is answered 409 and the handler runs once", async () => {
    const receiver = createReceiver({ secret: SECRET, store: wrap(memoryStore()), leaseMs: 450 });
    const errors = errorsOf(receiver);
    const running = gate();
    let runs = 0;
    receiver.on('message.delivered', async () => {
      runs += 1;
      await running.opened;
    });
    const input = signed(envelope());
    const first = receiver.handle(input);
    await tick(1_000); // more than two leases
    const copy = await receiver.handle(input);
    expect(copy.status).toBe(409);
    running.open();
    expect((await first).status).toBe(200);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(runs).toBe(1);
    expect(errors).toEqual([]);
  });

  it('a receiver whose lease lapsed and was taken over by another receiver hears that it lost it, and cannot complete the delivery', async () => {
    // Two receivers (two processes) on one store; the store's clock jumps past the first one's lease,
    // as when its heartbeats stall. Each receiver counts its own tokens from 1.
    let now = Date.now();
    const shared = wrap(memoryStore({ now: () => now }));
    const first = createReceiver({ secret: SECRET, store: shared, leaseMs: 300 });
    const second = createReceiver({ secret: SECRET, store: shared, leaseMs: 300 });
    const firstErrors = errorsOf(first);
    const secondErrors = errorsOf(second);
    const firstRun = gate();
    const secondRun = gate();
    const attempts: number[] = [];
    first.on('message.delivered', async (_delivery, { attempt }) => {
      attempts.push(attempt);
      await firstRun.opened;
    });
    second.on('message.delivered', async (_delivery, { attempt }) => {
      attempts.push(attempt);
      await secondRun.opened;
    });
    const body = envelope();
    const input = signed(body);
    const firstAnswer = first.handle(input);
    await tick(5);
    now += 60_000;
    const secondAnswer = second.handle(input);
    await tick(250); // the first receiver's next heartbeat finds the lease gone
    expect(firstErrors.map((error) => error.message)).toContainEqual(
      expect.stringMatching(/lost the lease on wdl_.* while its handlers ran/),
    );
    expect(firstErrors.every((error) => error.info.phase === 'store' && error.info.delivery?.deliveryId === body.deliveryId)).toBe(true);
    firstRun.open();
    expect((await firstAnswer).status).toBe(200); // its handlers did finish
    expect(firstErrors.map((error) => error.message)).toContainEqual(
      expect.stringMatching(/lease on wdl_.* was lost before the handlers finished/),
    );
    // The second receiver still holds the delivery: a copy is told to come back, not told it is done.
    expect((await first.handle(input)).status).toBe(409);
    secondRun.open();
    expect((await secondAnswer).status).toBe(200);
    expect(json(await second.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(attempts).toEqual([1, 2]);
    expect(secondErrors).toEqual([]);
  });

  it('reports a lost lease when a failed attempt releases it after another receiver took over', async () => {
    let now = Date.now();
    const shared = wrap(memoryStore({ now: () => now }));
    const first = createReceiver({ secret: SECRET, store: shared, leaseMs: 60_000 });
    const second = createReceiver({ secret: SECRET, store: shared, leaseMs: 60_000 });
    const firstErrors = errorsOf(first);
    const firstRun = gate();
    first.on('message.delivered', async () => {
      await firstRun.opened;
      throw new Error('timed out talking to the CRM');
    });
    second.on('message.delivered', () => {});
    const input = signed(envelope());
    const firstAnswer = first.handle(input);
    await tick(5);
    now += 61_000;
    expect((await second.handle(input)).status).toBe(200);
    firstRun.open();
    expect((await firstAnswer).status).toBe(500);
    expect(firstErrors.map((error) => error.message)).toContainEqual(
      expect.stringMatching(/lease on wdl_.* was lost before the handlers finished/),
    );
    // The release of a lease it no longer held changed nothing: the delivery stays completed.
    expect(json(await first.handle(input))).toEqual({ ok: true, duplicate: true });
  });
});

describe('a store that fails while the handlers run', () => {
  const failures = {
    'throws from extend': () => {
      throw new Error('connection reset');
    },
    'rejects extend': () => Promise.reject(new Error('connection reset')),
  };
  for (const [name, extend] of Object.entries(failures)) {
    it(`${name}: the error is reported with the delivery, the handlers finish and the answer is theirs`, async () => {
      const inner = memoryStore();
      const store: IdempotencyStore = {
        claim: (key, token, leaseMs) => inner.claim(key, token, leaseMs),
        complete: (key, token, retentionMs) => inner.complete(key, token, retentionMs),
        release: (key, token) => inner.release(key, token),
        extend,
      };
      const receiver = createReceiver({ secret: SECRET, store, leaseMs: 150 });
      const errors = errorsOf(receiver);
      receiver.on('message.delivered', () => tick(200));
      const input = signed(envelope());
      expect((await receiver.handle(input)).status).toBe(200);
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]).toMatchObject({ message: 'connection reset', info: { phase: 'store', delivery: { event: 'message.delivered' } } });
    });
  }

  it('an asynchronous complete that says the lease is gone is reported, and the answer stays 200', async () => {
    const inner = memoryStore();
    const store: IdempotencyStore = { ...asyncStore(inner), complete: async () => false };
    const receiver = createReceiver({ secret: SECRET, store });
    const errors = errorsOf(receiver);
    const handler = vi.fn();
    receiver.on('message.delivered', handler);
    const body = envelope();
    const input = signed(body);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
    expect(errors).toEqual([
      {
        message: expect.stringMatching(/^hookline: the lease on wdl_\S+ was lost before the handlers finished/),
        info: { phase: 'store', delivery: expect.objectContaining({ deliveryId: body.deliveryId }) },
      },
    ]);
  });

  it('an asynchronous complete that confirms reports nothing', async () => {
    const receiver = createReceiver({ secret: SECRET, store: asyncStore(memoryStore()) });
    const errors = errorsOf(receiver);
    receiver.on('message.delivered', () => {});
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(errors).toEqual([]);
  });
});
