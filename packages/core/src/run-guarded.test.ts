// Handlers registered with options, through the guarded runner: per-handler records, ordering guards,
// schemas and transactions, with the store answering each way it can (busy, lost, failing).
import diagnostics from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { STORE_CHANNEL, type StoreOperationMessage } from './diagnostics';
import type { ErrorInfo } from './hooks';
import { memoryStore } from './memory-store';
import type { ReceiverOptions } from './options';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, json, SECRET, signed } from './test-support';

type Store = ReturnType<typeof memoryStore>;

/** A memory store with some methods replaced; `claimed` lists every key claimed. */
function storeWith(overrides: (inner: Store) => Partial<IdempotencyStore> = () => ({})) {
  const inner = memoryStore();
  const claimed: string[] = [];
  const replaced = overrides(inner);
  const store: IdempotencyStore = Object.assign(Object.create(inner) as Store, {
    claim: (key: string, token: string, leaseMs: number) => {
      claimed.push(key);
      return (replaced.claim ?? inner.claim)(key, token, leaseMs);
    },
    complete: replaced.complete ?? inner.complete,
    release: replaced.release ?? inner.release,
    extend: inner.extend,
    ...(replaced.transaction ? { transaction: replaced.transaction } : {}),
  });
  return { inner, store, claimed };
}

function receiverWith(options: Partial<ReceiverOptions>) {
  const reports: [message: string, phase: ErrorInfo['phase']][] = [];
  const receiver = createReceiver({ secret: SECRET, ...options } as ReceiverOptions).onError((error, info) => {
    reports.push([(error as Error).message, info.phase]);
  });
  return { receiver, reports };
}

/** A Standard Schema that accepts anything (so a handler is guarded without changing its data). */
const anything = { '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) } };

describe("per-handler records (completion: 'handler')", () => {
  it('runs every handler after a failure; the delivery fails with the first failure and a later one is reported', async () => {
    const { receiver, reports } = receiverWith({ completion: 'handler' });
    const ran: string[] = [];
    const failures: unknown[] = [];
    receiver.hook('failed', ({ error }) => void failures.push(error));
    const first = new Error('first failed');
    receiver.on(
      '*',
      () => {
        ran.push('a');
        throw first;
      },
      { name: 'a' },
    );
    receiver.on(
      '*',
      () => {
        ran.push('b');
        throw new Error('second failed');
      },
      { name: 'b' },
    );
    receiver.on('*', () => void ran.push('c'), { name: 'c' });
    expect((await receiver.handle(signed(envelope()))).status).toBe(500);
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(failures).toEqual([first]);
    expect(reports).toEqual([
      ['second failed', 'handler'],
      ['first failed', 'handler'],
    ]);
  });

  it("answers 409 handler_in_progress while another attempt holds a handler's record, and runs nothing of it", async () => {
    const { store } = storeWith();
    const { receiver } = receiverWith({ completion: 'handler', store });
    let runs = 0;
    receiver.on('*', () => void runs++, { name: 'audit' });
    const body = envelope();
    store.claim(`hookline:${body.deliveryId}#audit`, 'another-attempt', 7_000);
    const answer = await receiver.handle(signed(body));
    expect(answer.status).toBe(409);
    expect(json(answer).error?.details).toMatchObject({ reason: 'handler_in_progress' });
    expect(answer.headers['retry-after']).toBe('7');
    expect(runs).toBe(0);
  });

  it("reports a failed release of a handler's record as a store error, beside the handler's failure", async () => {
    const { store } = storeWith((inner) => ({
      release: (key, token) => (key.includes('#') ? Promise.reject(new Error('release failed')) : inner.release(key, token)),
    }));
    const { receiver, reports } = receiverWith({ completion: 'handler', store });
    receiver.on(
      '*',
      () => {
        throw new Error('handler failed');
      },
      { name: 'audit' },
    );
    expect((await receiver.handle(signed(envelope()))).status).toBe(500);
    // Each once: the release as the store error it is, not again as a refusal of the delivery.
    expect(reports).toEqual([
      ['release failed', 'store'],
      ['handler failed', 'handler'],
    ]);
  });

  it("reports a handler's record lost before its completion (another attempt took it over)", async () => {
    const { store } = storeWith((inner) => ({
      complete: (key, token, retentionMs) => (key.includes('#') ? false : inner.complete(key, token, retentionMs)),
    }));
    const { receiver, reports } = receiverWith({ completion: 'handler', store });
    receiver.on('*', () => {}, { name: 'audit' });
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(200);
    expect(reports).toEqual([[`hookline: lost the record hookline:${body.deliveryId}#audit before it was completed`, 'store']]);
  });

  it("answers 503 and reports a store error naming the delivery when a handler's record cannot be claimed", async () => {
    const { store } = storeWith((inner) => ({
      claim: (key, token, leaseMs) => (key.includes('#') ? Promise.reject(new Error('claim failed')) : inner.claim(key, token, leaseMs)),
    }));
    const deliveries: (string | undefined)[] = [];
    const receiver = createReceiver({ secret: SECRET, completion: 'handler', store }).onError((_, info) => {
      deliveries.push(`${info.phase}:${info.delivery?.deliveryId}`);
    });
    let runs = 0;
    receiver.on('*', () => void runs++, { name: 'audit' });
    const body = envelope();
    const answer = await receiver.handle(signed(body));
    expect(answer.status).toBe(503);
    expect(json(answer).error?.details).toEqual({ reason: 'store_unavailable' });
    expect(deliveries).toEqual([`store:${body.deliveryId}`]);
    expect(runs).toBe(0);
  });
});

describe('store operations on hookline:store', () => {
  it("names a handler record's claim, complete and release as such", async () => {
    const messages: StoreOperationMessage[] = [];
    const listener = (message: unknown) => void messages.push(message as StoreOperationMessage);
    diagnostics.subscribe(STORE_CHANNEL, listener);
    try {
      const { receiver } = receiverWith({ completion: 'handler' });
      let fail = true;
      receiver.on(
        '*',
        () => {
          if (fail) throw new Error('once');
        },
        { name: 'audit' },
      );
      const input = signed(envelope());
      await receiver.handle(input);
      fail = false;
      await receiver.handle(input);
      expect(messages.map((m) => m.operation)).toEqual(['claim', 'claim', 'release', 'release', 'claim', 'claim', 'complete', 'complete']);
    } finally {
      diagnostics.unsubscribe(STORE_CHANNEL, listener);
    }
  });
});

describe("guarded handlers under completion: 'delivery'", () => {
  it('run a handler that returns null or a plain value like one that returns nothing', async () => {
    const { receiver } = receiverWith({});
    const ran: string[] = [];
    const returning = (label: string, value: unknown) => () => {
      ran.push(label);
      return value;
    };
    receiver.on('*', returning('null', null), { name: 'gives-null', schema: anything });
    receiver.on('*', returning('value', 42), { name: 'gives-value', schema: anything });
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(ran).toEqual(['null', 'value']);
  });

  it('keep no record of their own, and a failure stops the handlers after it', async () => {
    const { store, claimed } = storeWith();
    const { receiver } = receiverWith({ store });
    const ran: string[] = [];
    receiver.on(
      '*',
      () => {
        ran.push('checked');
        throw new Error('failed');
      },
      { name: 'checked', schema: anything },
    );
    receiver.on('*', () => void ran.push('after'), { name: 'after', schema: anything });
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(500);
    expect(ran).toEqual(['checked']);
    expect(claimed).toEqual([`hookline:${body.deliveryId}`]);
  });
});

describe('ordering guards', () => {
  const event = 'line.status_changed';
  const at = (offsetMs: number) => new Date(Date.now() - 60_000 + offsetMs).toISOString();
  const status = (offsetMs: number, lineId: string | undefined = 'lin_1') =>
    envelope({ event, timestamp: at(offsetMs), data: { lineId, status: `s${offsetMs}` } });

  it('holds the lock and the version under <namespace>order:<handler>:…:<resource>, and releases the lock after each delivery', async () => {
    const { store, claimed } = storeWith();
    const { receiver } = receiverWith({ store, namespace: 'app:' });
    receiver.on(event, () => {}, { name: 'status', order: { key: (d) => String(d.data.lineId) } });
    const later = status(2_000);
    expect((await receiver.handle(signed(status(1_000)))).status).toBe(200);
    expect((await receiver.handle(signed(later))).status).toBe(200);
    expect(claimed.filter((key) => key.includes('order:'))).toEqual(['app:order:status:lock:lin_1', 'app:order:status:lock:lin_1']);
    expect((store as Store).readVersion('app:order:status:version:lin_1')).toBe(Date.parse(String(later.timestamp)));
  });

  it("answers 409 resource_busy with the lock holder's Retry-After while another delivery of the resource runs", async () => {
    const { store } = storeWith();
    const { receiver } = receiverWith({ store });
    let runs = 0;
    receiver.on(event, () => void runs++, { name: 'status', order: { key: (d) => String(d.data.lineId) } });
    store.claim('hookline:order:status:lock:lin_1', 'another-delivery', 9_000);
    const answer = await receiver.handle(signed(status(1_000)));
    expect(answer.status).toBe(409);
    expect(json(answer).error?.details).toMatchObject({ reason: 'resource_busy' });
    expect(answer.headers['retry-after']).toBe('9');
    expect(runs).toBe(0);
  });

  it('reports a failed release of the lock as a store error; the delivery is still handled', async () => {
    const { store } = storeWith((inner) => ({
      release: (key, token) => (key.includes(':lock:') ? Promise.reject(new Error('unlock failed')) : inner.release(key, token)),
    }));
    const { receiver, reports } = receiverWith({ store });
    receiver.on(event, () => {}, { name: 'status', order: { key: (d) => String(d.data.lineId) } });
    expect((await receiver.handle(signed(status(1_000)))).status).toBe(200);
    // Once, as the store error it is: not again as a refusal of a delivery that was processed.
    expect(reports).toEqual([['unlock failed', 'store']]);
  });

  it('runs without a guard (no lock, every delivery) when the key function gives undefined', async () => {
    const { store, claimed } = storeWith();
    const { receiver } = receiverWith({ store });
    const seen: string[] = [];
    receiver.on(event, (d) => void seen.push(String(d.data.status)), { name: 'status', order: { key: () => undefined } });
    expect((await receiver.handle(signed(status(2_000, undefined)))).status).toBe(200);
    expect((await receiver.handle(signed(status(1_000, undefined)))).status).toBe(200);
    expect(seen).toEqual(['s2000', 's1000']);
    expect(claimed.some((key) => key.includes('order:'))).toBe(false);
  });

  it("skips a delivery whose version equals the last one processed, and runs an older one with stale: 'run'", async () => {
    const { receiver } = receiverWith({});
    const skipped: string[] = [];
    const replayed: string[] = [];
    receiver.on(event, (d) => void skipped.push(String(d.data.status)), {
      name: 'skip',
      order: { key: (d) => String(d.data.lineId), version: (d) => Number(d.data.version) },
    });
    receiver.on(event, (d) => void replayed.push(String(d.data.status)), {
      name: 'run',
      order: { key: (d) => String(d.data.lineId), version: (d) => Number(d.data.version), stale: 'run' },
    });
    const versioned = (version: number, label: string) => envelope({ event, data: { lineId: 'lin_1', version, status: label } });
    for (const body of [versioned(5, 'first'), versioned(5, 'same'), versioned(4, 'older')]) {
      expect((await receiver.handle(signed(body))).status).toBe(200);
    }
    expect(skipped).toEqual(['first']);
    expect(replayed).toEqual(['first', 'same', 'older']);
  });

  it("completes a skipped handler's own record, so that delivery never runs it", async () => {
    const { store } = storeWith();
    const { receiver } = receiverWith({ store, completion: 'handler' });
    receiver.on(event, () => {}, { name: 'status', order: { key: (d) => String(d.data.lineId) } });
    expect((await receiver.handle(signed(status(2_000)))).status).toBe(200);
    const older = status(1_000);
    expect((await receiver.handle(signed(older))).status).toBe(200);
    expect(store.claim(`hookline:${older.deliveryId}#status`, 'later', 1_000)).toEqual({ state: 'completed' });
  });

  it("waits (409 predecessor_not_seen) for a first rank above firstRank, and takes firstRank's own rank at once", async () => {
    const { receiver } = receiverWith({});
    const order = (firstRank?: number) => ({
      key: (d: { data: Record<string, unknown> }) => String(d.data.lineId),
      version: (d: { data: Record<string, unknown> }) => Number(d.data.rank),
      early: 'retry' as const,
      ...(firstRank === undefined ? {} : { firstRank }),
    });
    receiver.on(event, () => {}, { name: 'from-one', order: order() });
    const ranked = (lineId: string, rank: number) => signed(envelope({ event, data: { lineId, rank } }));
    const early = await receiver.handle(ranked('lin_a', 2));
    expect(early.status).toBe(409);
    expect(json(early).error?.details).toMatchObject({ reason: 'predecessor_not_seen' });
    expect((await receiver.handle(ranked('lin_b', 1))).status).toBe(200);
    // After rank 1, rank 3 waits for rank 2; rank 2 runs at once.
    const gap = await receiver.handle(ranked('lin_b', 3));
    expect(gap.status).toBe(409);
    expect(json(gap).error?.details).toMatchObject({ reason: 'predecessor_not_seen' });
    expect((await receiver.handle(ranked('lin_b', 2))).status).toBe(200);

    const { receiver: fromTwo } = receiverWith({});
    fromTwo.on(event, () => {}, { name: 'from-two', order: order(2) });
    expect((await fromTwo.handle(ranked('lin_c', 2))).status).toBe(200);
  });
});

describe('schemas', () => {
  const failing = {
    '~standard': {
      version: 1 as const,
      vendor: 'test',
      validate: () => ({ issues: [{ message: 'expected a string', path: ['items', 0, { key: 'id' }] }, { message: 'required' }] }),
    },
  };

  it("names each issue's path (keys, indexes, path segments), and the handler, in a SchemaMismatch", async () => {
    const { receiver } = receiverWith({});
    const failures: unknown[] = [];
    receiver.hook('failed', ({ error }) => void failures.push(error));
    receiver.on('*', () => {}, { name: 'typed', schema: failing });
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(500);
    const error = failures[0] as Error;
    expect(error.name).toBe('SchemaMismatch');
    expect(error.message).toBe(
      `the ${body.event} payload does not match typed's schema: data.items[0].id: expected a string; data: required`,
    );
  });

  it("names an unnamed handler's schema as the handler's", async () => {
    const { receiver } = receiverWith({});
    const failures: unknown[] = [];
    receiver.hook('failed', ({ error }) => void failures.push(error));
    receiver.on('*', () => {}, { schema: failing });
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(500);
    expect((failures[0] as Error).message).toMatch(new RegExp(`^the ${body.event} payload does not match the handler's schema: `));
  });

  it('awaits an asynchronous schema and hands the handler its output', async () => {
    const { receiver } = receiverWith({});
    const seen: unknown[] = [];
    const upper = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: async (value: unknown) => ({ value: { ...(value as object), checked: true } }),
      },
    };
    receiver.on('*', (d) => void seen.push(d.data), { name: 'typed', schema: upper });
    expect((await receiver.handle(signed(envelope({ data: { messageId: 'msg_1' } })))).status).toBe(200);
    expect(seen).toEqual([{ messageId: 'msg_1', checked: true }]);
  });
});

describe('transactional handlers', () => {
  /** A memory store with transaction(): the work, then the completion on its token (as a database store does it). */
  function transactionalStore(options: { lose?: boolean } = {}) {
    return storeWith((inner) => ({
      transaction: async (work, completion) => {
        const value = await work('the-transaction');
        const completed = options.lose ? false : inner.complete(completion.key, completion.token, completion.retentionMs);
        return { value, completed };
      },
    }));
  }

  it('hands the handler its transaction beside the usual context, and completes its record with it', async () => {
    const { store } = transactionalStore();
    const { receiver } = receiverWith({ store });
    const seen: unknown[] = [];
    receiver.on(
      '*',
      async (_, context) => {
        seen.push(context.transaction, context.attempt);
      },
      { name: 'write', transactional: true },
    );
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(200);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(seen).toEqual(['the-transaction', 1]);
  });

  it('completes the transaction only once an asynchronous handler has finished', async () => {
    const steps: string[] = [];
    const { store } = storeWith((inner) => ({
      transaction: async (work, completion) => {
        const value = await work('the-transaction');
        steps.push('commit');
        return { value, completed: inner.complete(completion.key, completion.token, completion.retentionMs) };
      },
    }));
    const { receiver } = receiverWith({ store });
    receiver.on(
      '*',
      async () => {
        await new Promise((resolve) => setImmediate(resolve));
        steps.push('handler wrote');
      },
      { name: 'write', transactional: true },
    );
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(steps).toEqual(['handler wrote', 'commit']);
  });

  it('fails the delivery (500, retried) when the lease was lost before the transaction committed, naming the handler', async () => {
    const { store } = transactionalStore({ lose: true });
    const { receiver, reports } = receiverWith({ store });
    receiver.on('*', () => {}, { name: 'write', transactional: true });
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(500);
    expect(reports).toEqual([
      [
        `hookline: the lease on ${body.deliveryId} (write) was lost before its transaction committed; it was rolled back and the next attempt runs it`,
        'handler',
      ],
    ]);
  });
});

describe('a guard whose store call never answers', () => {
  const event = 'line.status_changed';
  const order = { key: () => 'lin_1' };
  const cases = [
    { guard: "a handler's record", operation: 'claim', options: { completion: 'handler' as const }, handler: {}, hung: '#' },
    { guard: "an ordering guard's lock", operation: 'claim', options: {}, handler: { order }, hung: ':lock:' },
    { guard: "an ordering guard's version", operation: 'readVersion', options: {}, handler: { order }, hung: ':version:' },
  ];

  for (const { guard, operation, options, handler, hung } of cases) {
    it(`answers 503 store_timeout, runs nothing and holds nothing when the ${operation} of ${guard} outlasts storeTimeoutMs`, async () => {
      // The store's calls on that key never answer until the store recovers.
      let hanging = true;
      const never = new Promise<never>(() => {});
      const { inner, store } = storeWith((inner) => ({
        claim: (key, token, leaseMs) => (hanging && key.includes(hung) ? never : inner.claim(key, token, leaseMs)),
      }));
      Object.assign(store, {
        readVersion: (key: string) => (hanging && key.includes(hung) ? never : inner.readVersion(key)),
        advanceVersion: inner.advanceVersion.bind(inner),
      });
      const { receiver, reports } = receiverWith({ ...options, store, storeTimeoutMs: 20 });
      let runs = 0;
      receiver.on(event, () => void runs++, { name: 'status', ...handler });
      const input = signed(envelope({ event, data: { lineId: 'lin_1' } }));

      const answer = await receiver.handle(input);
      expect(answer.status).toBe(503);
      expect(json(answer).error?.details).toEqual({ reason: 'store_timeout' });
      expect(runs).toBe(0);
      expect(reports).toEqual([[`hookline: the store's ${operation} did not answer within 20 ms (storeTimeoutMs)`, 'store']]);

      // Once the store answers again, the service's retry runs the handler: nothing was left held.
      hanging = false;
      expect((await receiver.handle(input)).status).toBe(200);
      expect(runs).toBe(1);
    });
  }
});
