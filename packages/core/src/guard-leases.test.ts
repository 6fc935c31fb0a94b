// The leases and writes of guarded handlers under time and failure: every lease a delivery holds is
// renewed with it, the version advances before a handler's record completes, and a guard's own
// functions are checked before anything runs.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HooklineError } from './errors';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, json, SECRET, signed } from './test-support';

const quiet = () => {};

/** A status change of line `lineId` with the given version, timestamped now. */
const status = (lineId: string, version: number) => envelope({ event: 'line.status_changed', data: { lineId, version } });
const byVersion = {
  key: (d: { data: { lineId?: unknown } }) => String(d.data.lineId),
  version: (d: { data: { version?: unknown } }) => Number(d.data.version),
};

describe('a guarded handler that runs longer than leaseMs', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps its resource locked: a newer delivery of the resource waits (409 resource_busy) until it ends', async () => {
    vi.useFakeTimers();
    const store = memoryStore();
    const receiver = createReceiver({ secret: SECRET, store, leaseMs: 1_000 }).onError(quiet);
    const started: number[] = [];
    const finish: (() => void)[] = [];
    receiver.on(
      'line.status_changed',
      (d) => {
        started.push(Number(d.data.version));
        return new Promise<void>((resolve) => finish.push(resolve));
      },
      { name: 'status', order: byVersion },
    );
    const older = receiver.handle(signed(status('lin_1', 1)));
    await vi.advanceTimersByTimeAsync(5_000); // five leases long, well inside deadlineMs
    const newer = signed(status('lin_1', 2));
    const busy = await receiver.handle(newer);
    expect(busy.status).toBe(409);
    expect(json(busy).error?.details).toMatchObject({ reason: 'resource_busy' });
    expect(started).toEqual([1]);

    finish[0]?.();
    expect((await older).status).toBe(200);
    const retry = receiver.handle(newer);
    await vi.advanceTimersByTimeAsync(0);
    finish[1]?.();
    expect((await retry).status).toBe(200);
    expect(started).toEqual([1, 2]);
  });

  it("keeps its own record (completion: 'handler') and its lock held under its token, then lets both lapse at maxRunMs", async () => {
    vi.useFakeTimers();
    const store = memoryStore();
    const receiver = createReceiver({ secret: SECRET, store, leaseMs: 1_000, maxRunMs: 10_000, completion: 'handler' }).onError(quiet);
    receiver.on('line.status_changed', () => new Promise<void>(() => {}), { name: 'status', order: byVersion });
    const body = status('lin_1', 1);
    void receiver.handle(signed(body));
    await vi.advanceTimersByTimeAsync(8_000);
    const record = `hookline:${body.deliveryId}#status`;
    const lock = 'hookline:order:status:lock:lin_1';
    expect(store.claim(record, 'intruder', 1_000).state).toBe('in_progress');
    expect(store.claim(lock, 'intruder', 1_000).state).toBe('in_progress');
    expect(store.claim(`hookline:${body.deliveryId}`, 'intruder', 1_000).state).toBe('in_progress');

    // Past maxRunMs the heartbeat stops for every lease at once: all three lapse within one lease.
    await vi.advanceTimersByTimeAsync(3_100);
    expect(store.claim(record, 'intruder', 1_000).state).toBe('acquired');
    expect(store.claim(lock, 'intruder', 1_000).state).toBe('acquired');
    expect(store.claim(`hookline:${body.deliveryId}`, 'intruder', 1_000).state).toBe('acquired');
  });
});

/**
 * A memory store in which the second of a handler's two closing writes (its version advance and its
 * record's completion, whichever comes second) fails once: a store blip, or the process dying between
 * the two writes.
 */
function failingSecondWrite() {
  const inner = memoryStore();
  let writes = 0;
  let failed = false;
  const failSecond = <T>(write: () => T): T => {
    writes += 1;
    if (writes === 2 && !failed) {
      failed = true;
      throw new Error('connection reset');
    }
    return write();
  };
  const store: IdempotencyStore = Object.assign(Object.create(inner) as typeof inner, {
    advanceVersion: (key: string, version: number, retentionMs: number) =>
      failSecond(() => inner.advanceVersion(key, version, retentionMs)),
    complete: (key: string, token: string, retentionMs: number) =>
      key.includes('#') ? failSecond(() => inner.complete(key, token, retentionMs)) : inner.complete(key, token, retentionMs),
  });
  return { store, failed: () => failed };
}

describe("a handler's record and its version", () => {
  it('never leave a completed handler with an unadvanced version: an older delivery stays skipped after the failure', async () => {
    const { store, failed } = failingSecondWrite();
    const receiver = createReceiver({ secret: SECRET, store, completion: 'handler' }).onError(quiet);
    const written: number[] = [];
    receiver.on('line.status_changed', (d) => void written.push(Number(d.data.version)), { name: 'status', order: byVersion });

    const newer = signed(status('lin_1', 2));
    expect((await receiver.handle(newer)).status).toBe(503); // the second write failed: the service retries
    expect(failed()).toBe(true);
    expect(written).toEqual([2]);

    // An older delivery of the resource arrives meanwhile: it must not overwrite the newer state.
    expect((await receiver.handle(signed(status('lin_1', 1)))).status).toBe(200);
    expect(written).toEqual([2]);

    // The service's retry of the newer one finishes its record without running the handler again.
    expect((await receiver.handle(newer)).status).toBe(200);
    expect(written).toEqual([2]);
    expect(json(await receiver.handle(newer))).toEqual({ ok: true, duplicate: true });
  });

  it('tries a failed advance again, and when both tries time out keeps the lock until it lapses, so a late advance lands before any older write', async () => {
    vi.useFakeTimers();
    try {
      const inner = memoryStore();
      let calls = 0;
      // The store is slow for a while: both advances time out, and each lands 500 ms after it was sent.
      const store: IdempotencyStore = Object.assign(Object.create(inner) as typeof inner, {
        advanceVersion: (key: string, version: number, retentionMs: number) => {
          calls += 1;
          return new Promise<boolean>((resolve) => setTimeout(() => resolve(inner.advanceVersion(key, version, retentionMs)), 500));
        },
      });
      const receiver = createReceiver({ secret: SECRET, store, completion: 'handler', leaseMs: 3_000, storeTimeoutMs: 100 }).onError(quiet);
      const written: number[] = [];
      receiver.on('line.status_changed', (d) => void written.push(Number(d.data.version)), { name: 'status', order: byVersion });

      const newer = signed(status('lin_1', 2));
      const first = receiver.handle(newer);
      await vi.advanceTimersByTimeAsync(250);
      const answer = await first;
      expect(answer.status).toBe(503);
      expect(json(answer).error?.details).toEqual({ reason: 'store_timeout' });
      expect(calls).toBe(2);

      // The lock was not released: an older delivery of the resource waits rather than write first.
      const older = signed(status('lin_1', 1));
      expect(json(await receiver.handle(older)).error?.details).toMatchObject({ reason: 'resource_busy' });
      await vi.advanceTimersByTimeAsync(3_500); // the advances land; the lock lapses
      expect(inner.readVersion('hookline:order:status:version:lin_1')).toBe(2);
      expect((await receiver.handle(older)).status).toBe(200); // stale: skipped
      expect((await receiver.handle(newer)).status).toBe(200); // its own version is recorded: not run again
      expect(written).toEqual([2]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands a transactional handler the version to advance in its transaction, and advances nothing outside it', async () => {
    const inner = memoryStore();
    const seen: unknown[] = [];
    const advances: string[] = [];
    const store: IdempotencyStore = Object.assign(Object.create(inner) as typeof inner, {
      advanceVersion: (key: string, version: number, retentionMs: number) => {
        advances.push(key);
        return inner.advanceVersion(key, version, retentionMs);
      },
      transaction: async <T>(
        work: (tx: unknown) => Promise<T>,
        completion: Parameters<NonNullable<IdempotencyStore['transaction']>>[1],
      ) => {
        const value = await work('tx');
        seen.push(completion.version);
        const { key, version, retentionMs } = completion.version ?? { key: '', version: 0, retentionMs: 0 };
        if (completion.version !== undefined) inner.advanceVersion(key, version, retentionMs);
        return { value, completed: inner.complete(completion.key, completion.token, completion.retentionMs) };
      },
    });
    const receiver = createReceiver({ secret: SECRET, store });
    receiver.on('line.status_changed', () => {}, { name: 'status', order: byVersion, transactional: true });
    expect((await receiver.handle(signed(status('lin_1', 7)))).status).toBe(200);
    expect(seen).toEqual([{ key: 'hookline:order:status:version:lin_1', version: 7, retentionMs: 72 * 3_600_000 }]);
    expect(advances).toEqual([]);
    expect(inner.readVersion('hookline:order:status:version:lin_1')).toBe(7);
  });
});

describe("a guard's key or version that cannot be used", () => {
  const cases: [what: string, order: { key: (d: never) => unknown; version?: (d: never) => unknown }, reason: string, says: RegExp][] = [
    [
      'a version of NaN (a missing field through Number())',
      { key: () => 'lin_1', version: () => Number(undefined) },
      'order_version_invalid',
      /order\.version returned NaN .*finite number/,
    ],
    ['an infinite version', { key: () => 'lin_1', version: () => Number.POSITIVE_INFINITY }, 'order_version_invalid', /returned Infinity/],
    ['a version that is a string', { key: () => 'lin_1', version: () => '3' }, 'order_version_invalid', /returned "3"/],
    [
      'a version function that returns nothing',
      { key: () => 'lin_1', version: () => undefined },
      'order_version_invalid',
      /returned undefined/,
    ],
    [
      'a version function that throws',
      {
        key: () => 'lin_1',
        version: () => {
          throw new TypeError('no seq');
        },
      },
      'order_version_invalid',
      /order\.version threw .*no seq/,
    ],
    ['a key that is a number', { key: () => 42 }, 'order_key_invalid', /order\.key returned 42 .*non-empty string/],
    ['an empty key', { key: () => '' }, 'order_key_invalid', /order\.key returned ""/],
    [
      'a key function that throws',
      {
        key: () => {
          throw new Error('no lineId');
        },
      },
      'order_key_invalid',
      /order\.key threw .*no lineId/,
    ],
  ];

  it.each(cases)("is the handler's configuration error for %s: 500, named, nothing run or held", async (_, order, reason, says) => {
    const store = memoryStore();
    const failures: unknown[] = [];
    const reports: unknown[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      store,
      completion: 'handler',
      hooks: { failed: ({ error }) => void failures.push(error) },
    }).onError((error) => void reports.push(error));
    const handler = vi.fn();
    receiver.on('line.status_changed', handler, { name: 'status', order: order as never });
    const body = status('lin_1', 1);
    const answer = await receiver.handle(signed(body));

    expect(answer.status).toBe(500);
    const error = json(answer).error;
    expect(error?.code).toBe('CONFIGURATION_ERROR');
    expect(error?.details).toEqual({ reason, handler: 'status' });
    expect(error?.message).toMatch(says);
    expect(error?.message).toContain("name: 'status'");
    expect(handler).not.toHaveBeenCalled();
    expect(failures).toHaveLength(1);
    expect(reports).toEqual(failures);
    // Nothing recorded for the guard, and nothing left held: the retry after a fix runs at once.
    expect(store.readVersion('hookline:order:status:version:lin_1')).toBeUndefined();
    expect(store.claim(`hookline:${body.deliveryId}#status`, 'next', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
    expect(store.claim('hookline:order:status:lock:lin_1', 'next', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });
});

describe("a handler's own HooklineError", () => {
  it('is a failure like any other (the failed hook hears it), even with the code a guard would use', async () => {
    const failed = vi.fn();
    const receiver = createReceiver({ secret: SECRET, hooks: { failed } }).onError(quiet);
    const thrown = new HooklineError('CONFLICT', 'the CRM says the contact is locked');
    receiver.on(
      'line.status_changed',
      () => {
        throw thrown;
      },
      { name: 'status', order: byVersion },
    );
    const answer = await receiver.handle(signed(status('lin_1', 1)));
    expect(answer.status).toBe(500);
    expect(failed).toHaveBeenCalledTimes(1);
    expect(failed.mock.calls[0]?.[0].error).toBe(thrown);
  });
  it('is a failure without handler options too: 500, the failed hook hears it, the retry runs the handler again', async () => {
    const failed = vi.fn();
    const receiver = createReceiver({ secret: SECRET, hooks: { failed } }).onError(quiet);
    const thrown = new HooklineError('CONFLICT', 'the CRM says the contact is locked');
    const handler = vi.fn(() => {
      throw thrown;
    });
    receiver.on('line.status_changed', handler);
    const delivery = signed(status('lin_1', 1));
    expect((await receiver.handle(delivery)).status).toBe(500);
    expect(failed).toHaveBeenCalledTimes(1);
    expect(failed.mock.calls[0]?.[0].error).toBe(thrown);
    expect((await receiver.handle(delivery)).status).toBe(500);
    expect(handler).toHaveBeenCalledTimes(2);
  });
});
