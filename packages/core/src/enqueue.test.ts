// Answer-fast mode's enqueue step: what the job carries (the tenant's scope only when there is one,
// the trace context a tracer set); the receipt's one call, to the queue (no store call); and a queue
// that fails: reported as the queue's error (phase, answer, log line, trace), timed on hookline:queue as
// `enqueue`, never on the store's channel.
import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeliveryTrace } from './delivery-trace';
import { DELIVERY_CHANNEL, QUEUE_CHANNEL, type QueueOperationMessage, STORE_CHANNEL, type StoreOperationMessage } from './diagnostics';
import { type DeliveryQueue, type QueuedDelivery, queuedDeliveryJson, scopedDeliveryId } from './queue';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import { envelope, SECRET, signed } from './test-support';

function recordingQueue(fail?: Error) {
  const jobs: QueuedDelivery[] = [];
  const json: string[] = [];
  const queue: DeliveryQueue = {
    name: 'recording',
    async enqueue(job) {
      if (fail) throw fail;
      json.push(queuedDeliveryJson(job));
      jobs.push(structuredClone(job));
      return { duplicate: false };
    },
    work: () => ({ close: async () => {} }),
    deadLetters: async () => [],
    replay: async () => false,
    replayAll: async () => 0,
    close: async () => {},
  };
  return { queue, jobs, json };
}

let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

describe('the queued job', () => {
  it("is stored as JSON made around the verified body's own text, which reads back as the job with the body's fields", async () => {
    const { queue, jobs, json } = recordingQueue();
    // Spacing and a field beyond the envelope's four, as the service may send: kept byte for byte.
    const text = JSON.stringify({ ...envelope(), region: 'eu-west-1' }, null, 2);
    await createReceiver({ secret: () => ({ tenant: 'acme', secret: SECRET }), queue })
      .on('*', () => {})
      .handle(signed(text));
    const [job] = jobs;
    expect(json[0]).toContain(`{"delivery":${text},`);
    expect(JSON.parse(json[0] as string)).toEqual({ ...job, delivery: JSON.parse(text) });
    expect(job?.scope).toBe('tenant:acme:');
  });

  it('leaves that JSON out of what a spread or JSON.stringify of the job sees, and serialises a job made elsewhere as it is', async () => {
    const { queue } = recordingQueue();
    let seen: QueuedDelivery | undefined;
    const spy: DeliveryQueue = {
      ...queue,
      async enqueue(job) {
        seen = job;
        return { duplicate: false };
      },
    };
    await createReceiver({ secret: SECRET, queue: spy })
      .on('*', () => {})
      .handle(signed(envelope()));
    expect(Object.keys(seen ?? {})).toEqual(['delivery', 'receivedAt', 'secretIndex']);
    expect(queuedDeliveryJson({ ...(seen as QueuedDelivery) })).toBe(JSON.stringify(seen));
    const handMade: QueuedDelivery = { delivery: seen!.delivery, receivedAt: 1, secretIndex: 2, scope: 's:' };
    expect(queuedDeliveryJson(handMade)).toBe(JSON.stringify(handMade));
  });

  it("has no scope with static secrets, and the tenant's scope with a resolver", async () => {
    const plain = recordingQueue();
    await createReceiver({ secret: SECRET, queue: plain.queue })
      .on('*', () => {})
      .handle(signed(envelope()));
    expect(plain.jobs).toHaveLength(1);
    expect(plain.jobs[0]).not.toHaveProperty('scope');

    const tenants = recordingQueue();
    await createReceiver({ secret: () => ({ tenant: 'acme', secret: SECRET }), queue: tenants.queue })
      .on('*', () => {})
      .handle(signed(envelope()));
    expect(tenants.jobs[0]?.scope).toBe('tenant:acme:');
  });

  it('carries the traceparent and tracestate a tracer set at receipt, and neither when none was set', async () => {
    let setContext = true;
    const onStart = (message: unknown) => {
      const trace = message as DeliveryTrace;
      if (!setContext) return;
      trace.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      trace.tracestate = 'vendor=1';
    };
    diagnostics.subscribe(`tracing:${DELIVERY_CHANNEL}:start`, onStart);
    cleanup = () => diagnostics.unsubscribe(`tracing:${DELIVERY_CHANNEL}:start`, onStart);
    const { queue, jobs } = recordingQueue();
    const receiver = createReceiver({ secret: SECRET, queue }).on('*', () => {});
    await receiver.handle(signed(envelope()));
    setContext = false;
    await receiver.handle(signed(envelope()));
    expect(jobs[0]).toMatchObject({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=1' });
    expect(jobs[1]).not.toHaveProperty('traceparent');
    expect(jobs[1]).not.toHaveProperty('tracestate');
  });
});

/** Subscribes to `name` until the test ends; the messages published on it. */
function listen<T>(name: string): T[] {
  const messages: T[] = [];
  const listener = (message: unknown) => void messages.push(message as T);
  diagnostics.subscribe(name, listener);
  const previous = cleanup;
  cleanup = () => {
    previous?.();
    diagnostics.unsubscribe(name, listener);
  };
  return messages;
}

describe('a queue that fails', () => {
  it("is reported as the queue's error naming the delivery, published on hookline:queue (not the store's channel)", async () => {
    const failure = new Error('queue down');
    const { queue } = recordingQueue(failure);
    const queueMessages = listen<QueueOperationMessage>(QUEUE_CHANNEL);
    const storeMessages = listen<StoreOperationMessage>(STORE_CHANNEL);
    const reports: [unknown, string, string | undefined][] = [];
    const receiver = createReceiver({ secret: SECRET, queue })
      .on('*', () => {})
      .onError((error, info) => {
        reports.push([error, info.phase, info.delivery?.deliveryId]);
      });
    const body = envelope();
    const answer = await receiver.handle(signed(body));
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The queue (recording) did not take the delivery; it was not processed and the service will retry.',
      details: { reason: 'queue_unavailable', queue: 'recording' },
    });
    expect(reports).toEqual([[failure, 'queue', body.deliveryId]]);
    expect(queueMessages.map((m) => [m.operation, m.queue, m.deliveryId, m.error])).toEqual([
      ['enqueue', 'recording', body.deliveryId, failure],
    ]);
    expect(storeMessages).toEqual([]);
  });

  it("names the queue in the default log line (one line: class, code, message) and in the logger's fields", async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
      const { queue } = recordingQueue(failure);
      const body = envelope();
      await createReceiver({ secret: SECRET, queue, logger: false })
        .on('*', () => {})
        .handle(signed(body));
      expect(consoleError.mock.calls).toEqual([
        [
          `[hookline] queue (recording) error (message.delivered ${body.deliveryId}): Error [ECONNREFUSED]: connect ECONNREFUSED 127.0.0.1:6379`,
        ],
      ]);
      const lines: [Record<string, unknown>, string | undefined][] = [];
      const logger = {
        warn: () => {},
        error: (fields: object, message?: string) => void lines.push([fields as Record<string, unknown>, message]),
      };
      await createReceiver({ secret: SECRET, queue, logger })
        .on('*', () => {})
        .handle(signed(body));
      expect(lines[0]?.[0]).toMatchObject({ phase: 'queue', queue: 'recording', deliveryId: body.deliveryId });
      expect(lines[0]?.[1]).toBe(
        `hookline: queue (recording) error (message.delivered ${body.deliveryId}): connect ECONNREFUSED 127.0.0.1:6379`,
      );
    } finally {
      consoleError.mockRestore();
    }
  });

  it('that does not answer in time: 503 queue_timeout naming the queue, and a time-out error that names it', async () => {
    const hung: DeliveryQueue = { ...recordingQueue().queue, name: 'hung', enqueue: () => new Promise(() => {}) };
    const messages: string[] = [];
    const receiver = createReceiver({ secret: SECRET, queue: hung, storeTimeoutMs: 30 })
      .on('*', () => {})
      .onError((error) => void messages.push((error as Error).message));
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The queue (hung) did not answer in time (storeTimeoutMs); the delivery was not processed and the service will retry.',
      details: { reason: 'queue_timeout', queue: 'hung' },
    });
    expect(messages).toEqual(['hookline: the queue (hung) did not answer the enqueue within 30 ms (storeTimeoutMs)']);
  });

  it("puts the queue's name and the enqueue's time on the delivery's trace, and the reason names the queue", async () => {
    const traces: DeliveryTrace[] = [];
    const onEnd = (message: unknown) => void traces.push(message as DeliveryTrace);
    diagnostics.subscribe(`tracing:${DELIVERY_CHANNEL}:asyncEnd`, onEnd);
    const onStart = () => {};
    diagnostics.subscribe(`tracing:${DELIVERY_CHANNEL}:start`, onStart);
    cleanup = () => {
      diagnostics.unsubscribe(`tracing:${DELIVERY_CHANNEL}:asyncEnd`, onEnd);
      diagnostics.unsubscribe(`tracing:${DELIVERY_CHANNEL}:start`, onStart);
    };
    const { queue } = recordingQueue(new Error('queue down'));
    await createReceiver({ secret: SECRET, queue, logger: false })
      .on('*', () => {})
      .onError(() => {})
      .handle(signed(envelope()));
    expect(traces[0]).toMatchObject({ queue: 'recording', outcome: 'rejected', reason: 'queue_unavailable', storeMs: {} });
    expect(traces[0]?.queueMs?.enqueue).toBeGreaterThanOrEqual(0);
  });
});

describe('the receipt', () => {
  it('makes one call, the enqueue: the store is not touched until a worker claims the job', async () => {
    const { queue } = recordingQueue();
    const calls: string[] = [];
    const store = new Proxy(memoryStore(), {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(name));
          return value.apply(target, args);
        };
      },
    });
    const storeMessages = listen<StoreOperationMessage>(STORE_CHANNEL);
    const queueMessages = listen<QueueOperationMessage>(QUEUE_CHANNEL);
    const receiver = createReceiver({ secret: SECRET, queue, store }).on('*', () => {});
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(202);
    expect((await receiver.handle(input)).status).toBe(202); // this queue never says duplicate
    expect(calls).toEqual([]);
    expect(storeMessages).toEqual([]);
    expect(queueMessages.map((m) => m.operation)).toEqual(['enqueue', 'enqueue']);
  });
});

describe('a delivery queued before', () => {
  /** A queue that holds jobs by scoped deliveryId, in a state the test sets: a dead letter is revived by enqueue. */
  function statefulQueue() {
    const states = new Map<string, 'waiting' | 'completed' | 'dead'>();
    let down = false;
    const enqueued: string[] = [];
    const queue: DeliveryQueue = {
      name: 'stateful',
      async enqueue(job) {
        if (down) throw new Error('queue down');
        const id = scopedDeliveryId(job);
        enqueued.push(id);
        const state = states.get(id);
        if (state !== undefined && state !== 'dead') return { duplicate: true };
        states.set(id, 'waiting');
        return { duplicate: false };
      },
      work: () => ({ close: async () => {} }),
      deadLetters: async () => [],
      replay: async () => false,
      replayAll: async () => 0,
      close: async () => {},
    };
    return { queue, states, enqueued, setDown: (value: boolean) => (down = value) };
  }

  it('is handed to the queue again: a replay of one whose job was dead-lettered is queued afresh (202), one whose job ran is a duplicate (200)', async () => {
    const { queue, states, enqueued } = statefulQueue();
    const duplicates: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, queue, hooks: { duplicate: (info) => void duplicates.push(info.state) } }).on(
      '*',
      () => {},
    );
    const body = envelope();
    const input = signed(body);
    expect((await receiver.handle(input)).status).toBe(202);

    states.set(body.deliveryId as string, 'dead'); // its job used up its tries in the workers
    const replay = await receiver.handle(input);
    expect(replay.status).toBe(202);
    expect(JSON.parse(replay.body)).toEqual({ ok: true, queued: true });
    expect(states.get(body.deliveryId as string)).toBe('waiting');

    states.set(body.deliveryId as string, 'completed'); // this time it ran to success
    const again = await receiver.handle(input);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
    expect(enqueued).toHaveLength(3);
    expect(duplicates).toEqual(['completed']);
  });

  it('answers 503 queue_unavailable when the queue cannot say, rather than a duplicate it cannot vouch for', async () => {
    const { queue, setDown } = statefulQueue();
    const receiver = createReceiver({ secret: SECRET, queue })
      .on('*', () => {})
      .onError(() => {});
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(202);
    setDown(true);
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).error.details).toEqual({ reason: 'queue_unavailable', queue: 'stateful' });
  });
});
