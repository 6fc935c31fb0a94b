// Answer-fast mode's enqueue step: what the job carries (the tenant's scope only when there is one,
// the trace context a tracer set), and a queue that fails: reported as a store error, timed on
// hookline:store as `enqueue`, the claim released.
import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { DELIVERY_CHANNEL, type DeliveryTrace, STORE_CHANNEL, type StoreOperationMessage } from './diagnostics';
import { type DeliveryQueue, type QueuedDelivery, queuedDeliveryJson } from './queue';
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
    expect(job?.scope).toBe('acme:');
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
    expect(tenants.jobs[0]?.scope).toBe('acme:');
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

describe('a queue that fails', () => {
  it('is reported as a store error naming the delivery, published as the enqueue operation, and the claim is released', async () => {
    const failure = new Error('queue down');
    const { queue } = recordingQueue(failure);
    const messages: StoreOperationMessage[] = [];
    const listener = (message: unknown) => void messages.push(message as StoreOperationMessage);
    diagnostics.subscribe(STORE_CHANNEL, listener);
    cleanup = () => diagnostics.unsubscribe(STORE_CHANNEL, listener);
    const reports: [unknown, string, string | undefined][] = [];
    const receiver = createReceiver({ secret: SECRET, queue })
      .on('*', () => {})
      .onError((error, info) => {
        reports.push([error, info.phase, info.delivery?.deliveryId]);
      });
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(503);
    expect(reports).toEqual([[failure, 'store', body.deliveryId]]);
    expect(messages.map((m) => [m.operation, m.error])).toEqual([
      ['claim', undefined],
      ['enqueue', failure],
      ['release', undefined],
    ]);
  });
});
