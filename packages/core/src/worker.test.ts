// The worker of answer-fast mode, one job at a time: what it makes of a payload it cannot trust, what
// it tells the queue for each outcome, the key a job is claimed under, its trace, and a worker's
// handlers running past deadlineMs (nobody waits for a worker's answer, so there is no deadline).
import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeliveryTrace } from './delivery-trace';
import { DELIVERY_CHANNEL } from './diagnostics';
import { HooklineError, PermanentFailure } from './errors';
import { memoryStore } from './memory-store';
import type { DeliveryQueue, JobResult, QueuedDelivery, QueueJob } from './queue';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, SECRET } from './test-support';

/** A queue that only hands the receiver's processor to the test, which then runs jobs itself. */
function directQueue() {
  let processor: ((job: QueueJob) => Promise<JobResult>) | undefined;
  const workOptions: { concurrency: number }[] = [];
  const queue: DeliveryQueue = {
    name: 'direct',
    enqueue: async () => ({ duplicate: false }),
    work(process, options) {
      processor = process;
      workOptions.push(options);
      return { close: async () => {} };
    },
    deadLetters: async () => [],
    replay: async () => false,
    replayAll: async () => 0,
    close: async () => {},
  };
  const run = (payload: QueuedDelivery, attempt = 1): Promise<JobResult> => {
    if (processor === undefined) throw new Error('receiver.work() was not called');
    return processor({ payload, attempt, maxAttempts: 3 });
  };
  return { queue, run, workOptions };
}

/** A memory store that lists the keys claimed. */
function claimLog() {
  const inner = memoryStore();
  const claimed: string[] = [];
  const store: IdempotencyStore = {
    claim: (key, token, leaseMs) => {
      claimed.push(key);
      return inner.claim(key, token, leaseMs);
    },
    complete: inner.complete,
    release: inner.release,
    extend: inner.extend,
  };
  return { store, claimed };
}

const job = (overrides: Partial<QueuedDelivery> = {}): QueuedDelivery => ({
  delivery: envelope() as unknown as QueuedDelivery['delivery'],
  receivedAt: Date.now(),
  secretIndex: 0,
  ...overrides,
});

describe('the key a job is claimed under', () => {
  it('is <namespace>work:<deliveryId> for a job without a scope (static secrets), so every worker agrees on it', async () => {
    const { queue, run } = directQueue();
    const { store, claimed } = claimLog();
    const receiver = createReceiver({ secret: SECRET, queue, store, namespace: 'app:' }).on('*', () => {});
    receiver.work();
    const unscoped = job();
    expect(await run(unscoped)).toEqual({ status: 'done' });
    expect(claimed).toEqual([`app:work:${unscoped.delivery.deliveryId}`]);
  });

  it("is <namespace>work:<scope><deliveryId> for a tenant's job, apart from another tenant's same deliveryId", async () => {
    const { queue, run } = directQueue();
    const { store, claimed } = claimLog();
    const handled: string[] = [];
    const receiver = createReceiver({ secret: SECRET, queue, store, namespace: 'app:' }).on('*', (delivery) => {
      handled.push(delivery.deliveryId);
    });
    receiver.work();
    const delivery = envelope() as unknown as QueuedDelivery['delivery'];
    expect(await run(job({ delivery, scope: 'acme:' }))).toEqual({ status: 'done' });
    expect(await run(job({ delivery, scope: 'globex:' }))).toEqual({ status: 'done' });
    expect(await run(job({ delivery, scope: 'acme:' }))).toEqual({ status: 'done' }); // a duplicate
    expect(claimed).toEqual([
      `app:work:acme:${delivery.deliveryId}`,
      `app:work:globex:${delivery.deliveryId}`,
      `app:work:acme:${delivery.deliveryId}`,
    ]);
    expect(handled).toEqual([delivery.deliveryId, delivery.deliveryId]);
  });
});

describe('the delivery a worker hands its handlers', () => {
  it("is the envelope's four fields, as on receipt, even when the stored job kept others the service sent", async () => {
    const { queue, run } = directQueue();
    const seen: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, queue }).on('*', (delivery) => {
      seen.push(delivery);
    });
    receiver.work();
    const { event, deliveryId, timestamp, data } = envelope();
    const stored = { event, deliveryId, timestamp, data, region: 'eu-west-1' } as unknown as QueuedDelivery['delivery'];
    expect(await run(job({ delivery: stored }))).toEqual({ status: 'done' });
    expect(seen).toEqual([{ event, deliveryId, timestamp, data }]);
  });
});

describe("a worker's handlers past deadlineMs", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('are waited for: the job is done when they finish, not retried at the deadline', async () => {
    vi.useFakeTimers();
    const { queue, run } = directQueue();
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, queue, deadlineMs: 1_000 }).onError((error) => {
      errors.push(error);
    });
    let finish!: () => void;
    receiver.on('*', () => new Promise<void>((resolve) => (finish = resolve)));
    receiver.work();
    let result: JobResult | undefined;
    let failure: unknown;
    run(job()).then(
      (value) => {
        result = value;
      },
      (error: unknown) => {
        failure = error;
      },
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(result).toBeUndefined();
    expect(failure).toBeUndefined();
    finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toEqual({ status: 'done' });
    expect(errors).toEqual([]);
  });
});

describe('a job payload the worker cannot trust', () => {
  const valid = () => ({ ...job() }) as unknown as Record<string, unknown>;
  const withDelivery = (change: Record<string, unknown>) => {
    const payload = valid();
    payload.delivery = { ...(payload.delivery as object), ...change };
    return payload;
  };
  const cases: [what: string, payload: unknown, reason: string][] = [
    ['null', null, 'the job payload is not an object'],
    ['a string', 'job', 'the job payload is not an object'],
    ['no delivery', { ...valid(), delivery: undefined }, 'the job payload has no delivery'],
    ['a null delivery', { ...valid(), delivery: null }, 'the job payload has no delivery'],
    ['a delivery that is a string', { ...valid(), delivery: 'message.delivered' }, 'the job payload has no delivery'],
    ['no event', withDelivery({ event: undefined }), 'the queued delivery has no event'],
    ['an empty event', withDelivery({ event: '' }), 'the queued delivery has no event'],
    ['a deliveryId that is a number', withDelivery({ deliveryId: 42 }), 'the queued delivery has no valid deliveryId'],
    ['a deliveryId without wdl_', withDelivery({ deliveryId: 'abc_1' }), 'the queued delivery has no valid deliveryId'],
    ['a timestamp that is a number', withDelivery({ timestamp: Date.now() }), 'the queued delivery has no valid timestamp'],
    ['a timestamp that is no date', withDelivery({ timestamp: 'yesterday' }), 'the queued delivery has no valid timestamp'],
    // Date.parse would read a one-element array as its string: only a string is a timestamp.
    ['a timestamp in an array', withDelivery({ timestamp: [new Date().toISOString()] }), 'the queued delivery has no valid timestamp'],
    // Receipt's rules (envelope.ts), not Date.parse's, which reads 2026-02-31 as March 3.
    [
      'a timestamp past the end of its month',
      withDelivery({ timestamp: '2026-02-31T10:00:00.000Z' }),
      'the queued delivery has no valid timestamp',
    ],
    ['a deliveryId with a control character', withDelivery({ deliveryId: 'wdl_a\u0000b' }), 'the queued delivery has no valid deliveryId'],
    ['data that is a string', withDelivery({ data: 'x' }), 'the queued delivery has no data object'],
    ['null data', withDelivery({ data: null }), 'the queued delivery has no data object'],
    ['data that is an array', withDelivery({ data: [] }), 'the queued delivery has no data object'],
    ['receivedAt that is a string', { ...valid(), receivedAt: '1' }, 'the job payload lacks receivedAt or secretIndex'],
    ['no secretIndex', { ...valid(), secretIndex: undefined }, 'the job payload lacks receivedAt or secretIndex'],
    ['a scope that is a number', { ...valid(), scope: 5 }, 'the job payload has a scope that is not a string'],
  ];

  it.each(cases)('dead-letters a payload with %s at once, naming what is wrong, and runs nothing', async (_, payload, reason) => {
    const { queue, run } = directQueue();
    const handler = vi.fn();
    createReceiver({ secret: SECRET, queue }).on('*', handler).work();
    expect(await run(payload as QueuedDelivery)).toEqual({ status: 'dead', reason: `corrupt job: ${reason}`, kind: 'corrupt' });
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('what the worker tells the queue', () => {
  it('done for a handled job and for a job that was handled before', async () => {
    const { queue, run } = directQueue();
    const handler = vi.fn();
    createReceiver({ secret: SECRET, queue }).on('*', handler).work();
    const once = job();
    expect(await run(once)).toEqual({ status: 'done' });
    expect(await run(once, 2)).toEqual({ status: 'done' });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('dead at once for a PermanentFailure, with its message', async () => {
    const { queue, run } = directQueue();
    createReceiver({ secret: SECRET, queue })
      .on('*', () => {
        throw new PermanentFailure('unknown message');
      })
      .work();
    expect(await run(job())).toEqual({ status: 'dead', reason: 'PermanentFailure: unknown message', kind: 'permanent' });
  });

  it("a retry (rejection) naming the handler's error and its class, its own error as the cause, or an Error carrying what it threw", async () => {
    const { queue, run } = directQueue();
    const failure = new Error('try again');
    let thrown: unknown = failure;
    createReceiver({ secret: SECRET, queue })
      .onError(() => {})
      .on('*', () => {
        throw thrown;
      })
      .work();
    await expect(run(job())).rejects.toThrow(new Error('Error: try again'));
    await expect(run(job())).rejects.toMatchObject({ cause: failure });
    thrown = new TypeError('no such field');
    await expect(run(job())).rejects.toThrow(new Error('TypeError: no such field'));
    thrown = 'a plain string';
    await expect(run(job())).rejects.toThrow(new Error('a plain string'));
  });

  it("a retry, not a wait, for a handler's own HooklineError with the code a guard's wait has (a failure like any other)", async () => {
    const { queue, run } = directQueue();
    const failed = vi.fn();
    const thrown = new HooklineError('CONFLICT', 'the CRM says the contact is locked', { details: { reason: 'in_progress' } });
    createReceiver({ secret: SECRET, queue, hooks: { failed } })
      .onError(() => {})
      .on('*', () => {
        throw thrown;
      })
      .work();
    await expect(run(job())).rejects.toMatchObject({ message: 'HooklineError: the CRM says the contact is locked', cause: thrown });
    expect(failed).toHaveBeenCalledTimes(1);
    expect(failed.mock.calls[0]?.[0].error).toBe(thrown);
  });

  it('a wait (no try spent) while another worker holds the job, naming the delivery', async () => {
    const { queue, run } = directQueue();
    const store = memoryStore();
    createReceiver({ secret: SECRET, queue, store }).on('*', vi.fn()).work();
    const busy = job();
    store.claim(`hookline:work:${busy.delivery.deliveryId}`, 'another-worker', 60_000);
    const result = await run(busy);
    expect(result).toMatchObject({ status: 'wait', reason: expect.stringContaining(`${busy.delivery.deliveryId} is in_progress`) });
  });

  it('a wait that neither the rejected hook nor the logger hears of, whether the delivery or a guard makes the job wait', async () => {
    const { queue, run } = directQueue();
    const store = memoryStore();
    const rejected = vi.fn();
    const warned: string[] = [];
    const logger = { info: () => {}, warn: (_fields: unknown, message: string) => warned.push(message), error: () => {} };
    createReceiver({ secret: SECRET, queue, store, logger, hooks: { rejected } })
      .on('*', vi.fn(), { name: 'status', order: { key: () => 'line_1' } })
      .work();
    const held = job();
    store.claim(`hookline:work:${held.delivery.deliveryId}`, 'another-worker', 60_000);
    const guarded = job({ delivery: envelope({ deliveryId: 'wdl_guarded' }) as unknown as QueuedDelivery['delivery'] });
    store.claim('hookline:work:order:status:lock:line_1', 'another-worker', 60_000);
    expect(await run(held)).toMatchObject({ status: 'wait', reason: expect.stringContaining('is in_progress') });
    expect(await run(guarded)).toMatchObject({ status: 'wait', reason: expect.stringContaining('is resource_busy') });
    expect(rejected).not.toHaveBeenCalled();
    expect(warned).toEqual([]);
  });

  it('a retry when the store fails before anything ran', async () => {
    const { queue, run } = directQueue();
    const inner = memoryStore();
    const store: IdempotencyStore = {
      ...inner,
      claim: () => Promise.reject(new Error('store down')),
      complete: inner.complete,
      release: inner.release,
      extend: inner.extend,
    };
    const handler = vi.fn();
    createReceiver({ secret: SECRET, queue, store })
      .onError(() => {})
      .on('*', handler)
      .work();
    const failing = job();
    await expect(run(failing)).rejects.toThrow(
      `hookline: ${failing.delivery.deliveryId} was not processed (the store failed); retry later`,
    );
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('receiver.work()', () => {
  it('hands the queue its concurrency, 1 by default', () => {
    const { queue, workOptions } = directQueue();
    const receiver = createReceiver({ secret: SECRET, queue });
    receiver.work();
    receiver.work({ concurrency: 4 });
    expect(workOptions).toEqual([{ concurrency: 1 }, { concurrency: 4 }]);
  });

  it('refuses a concurrency that is not a positive integer, naming it', () => {
    const { queue, workOptions } = directQueue();
    const receiver = createReceiver({ secret: SECRET, queue });
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => receiver.work({ concurrency })).toThrow(
        expect.objectContaining({
          code: 'CONFIGURATION_ERROR',
          message: `receiver.work(): concurrency must be a positive integer, got ${String(concurrency)}.`,
        }),
      );
    }
    expect(workOptions).toEqual([]);
  });

  it('without a queue, refuses with a configuration error', () => {
    expect(() => createReceiver({ secret: SECRET }).work()).toThrow(expect.objectContaining({ code: 'CONFIGURATION_ERROR' }));
  });
});

describe("the worker's trace", () => {
  it('carries the receipt time and the trace context of the job, and no context the job did not have', async () => {
    const traces: DeliveryTrace[] = [];
    const atStart: DeliveryTrace[] = [];
    const onStart = (message: unknown) => {
      traces.push(message as DeliveryTrace);
      atStart.push({ ...(message as DeliveryTrace) });
    };
    diagnostics.subscribe(`tracing:${DELIVERY_CHANNEL}:start`, onStart);
    try {
      const { queue, run } = directQueue();
      createReceiver({ secret: SECRET, queue }).on('*', vi.fn()).work();
      const traced = job({
        receivedAt: 1_700_000_000_000,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'vendor=1',
      });
      await run(traced, 3);
      const plain = job();
      await run(plain);
      expect(atStart[0]).toMatchObject({
        mode: 'work',
        receivedAt: 1_700_000_000_000,
        traceparent: traced.traceparent,
        tracestate: 'vendor=1',
        tries: 3,
      });
      expect(traces[0]).toMatchObject({ outcome: 'handled', tries: 3 });
      expect(atStart[1]).not.toHaveProperty('traceparent');
      expect(atStart[1]).not.toHaveProperty('tracestate');
      expect(atStart[1]?.receivedAt).toBe(plain.receivedAt);
    } finally {
      diagnostics.unsubscribe(`tracing:${DELIVERY_CHANNEL}:start`, onStart);
    }
  });
});
