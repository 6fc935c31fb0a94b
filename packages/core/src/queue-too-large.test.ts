// Answer-fast mode and a queue with a message size limit: a delivery the receiver accepts but the queue
// cannot carry is handled in the request, as synchronous mode would (never answered 503 until the
// service gives up); the receiver warns at start-up when its maxBodyBytes is above the queue's limit.
import { describe, expect, it } from 'vitest';
import { memoryStore } from './memory-store';
import { type DeliveryQueue, JobTooLargeError, type QueuedDelivery, queuedDeliveryJson } from './queue';
import { createReceiver } from './receiver';
import { queueJobEntry } from './receiver-entry';
import { envelope, json, SECRET, signed, tick } from './test-support';

/** A queue that carries jobs of at most `limit` bytes of JSON, and says so. */
function sizedQueue(limit: number, options: { bodyLimit?: () => Promise<number | undefined>; plainError?: boolean } = {}) {
  const jobs: QueuedDelivery[] = [];
  const queue: DeliveryQueue = {
    name: 'sized',
    async enqueue(job) {
      const bytes = Buffer.byteLength(queuedDeliveryJson(job));
      if (bytes > limit) {
        // A backend across a binding rejects with its own error carrying the code.
        if (options.plainError) throw Object.assign(new Error(`the job is ${bytes} bytes`), { code: 'JOB_TOO_LARGE' });
        throw new JobTooLargeError(`the job is ${bytes} bytes; the queue carries ${limit}`, bytes, limit);
      }
      jobs.push(job);
      return { duplicate: false };
    },
    work: () => ({ close: async () => {} }),
    deadLetters: async () => [],
    replay: async () => false,
    replayAll: async () => 0,
    close: async () => {},
    ...(options.bodyLimit === undefined ? {} : { bodyLimitBytes: options.bodyLimit }),
  };
  return { queue, jobs };
}

const large = () => envelope({ data: { messageId: 'msg_1', note: 'x'.repeat(2_000) } });

describe('a delivery larger than the queue carries', () => {
  it('is handled in the request (claimed, its handlers run, 200) instead of 503; its repeat is a duplicate', async () => {
    const { queue, jobs } = sizedQueue(1_000);
    const runs: string[] = [];
    const receiver = createReceiver({ secret: SECRET, queue }).on('*', (delivery) => void runs.push(delivery.deliveryId));
    const body = large();
    const first = await receiver.handle(signed(body));
    expect(first.status).toBe(200);
    expect(json(first)).toEqual({ ok: true });
    expect(runs).toEqual([body.deliveryId]);
    const again = await receiver.handle(signed(body));
    expect(json(again)).toEqual({ ok: true, duplicate: true });
    expect(runs).toHaveLength(1);
    // A small delivery still goes to the queue.
    expect((await receiver.handle(signed(envelope()))).status).toBe(202);
    expect(jobs).toHaveLength(1);
  });

  it('is claimed under the worker’s keys: a worker given the same delivery as a job later runs nothing', async () => {
    const { queue } = sizedQueue(1_000);
    const store = memoryStore();
    let runs = 0;
    const receiver = createReceiver({ secret: SECRET, queue, store }).on('*', () => void runs++);
    const body = large();
    expect((await receiver.handle(signed(body))).status).toBe(200);
    const job: QueuedDelivery = { delivery: body as unknown as QueuedDelivery['delivery'], receivedAt: Date.now(), secretIndex: 0 };
    const entry = queueJobEntry(receiver);
    expect(await entry?.process({ payload: job, attempt: 1, maxAttempts: 3 })).toEqual({ status: 'done' });
    expect(runs).toBe(1);
    expect(store.size).toBe(1);
  });

  it('answers 500 when its handler fails, and the service’s retry runs it again in the request', async () => {
    const { queue } = sizedQueue(1_000, { plainError: true });
    let runs = 0;
    const receiver = createReceiver({ secret: SECRET, queue })
      .on('*', () => {
        runs += 1;
        if (runs === 1) throw new Error('downstream down');
      })
      .onError(() => {});
    const body = large();
    expect((await receiver.handle(signed(body))).status).toBe(500);
    expect((await receiver.handle(signed(body))).status).toBe(200);
    expect(runs).toBe(2);
  });
});

describe('the start-up check of the queue’s limit', () => {
  function logger() {
    const lines: [object, string | undefined][] = [];
    return { lines, logger: { warn: (fields: object, message?: string) => void lines.push([fields, message]), error: () => {} } };
  }

  it('warns once when maxBodyBytes is above the body the queue carries, saying that larger deliveries are handled in the request', async () => {
    const { lines, logger: log } = logger();
    const { queue } = sizedQueue(100_000, { bodyLimit: async () => 100_000 });
    createReceiver({ secret: SECRET, queue, logger: log });
    await tick();
    expect(lines).toHaveLength(1);
    expect(lines[0]?.[0]).toEqual({ queue: 'sized', maxBodyBytes: 1_048_576, queueBodyLimitBytes: 100_000 });
    expect(lines[0]?.[1]).toMatch(/a delivery between the two is still accepted, but handled in the request as in synchronous mode/);
  });

  it('says nothing when maxBodyBytes is within it or nearly (a sliver above it), and warns when the limit cannot be read', async () => {
    const within = logger();
    createReceiver({
      secret: SECRET,
      queue: sizedQueue(0, { bodyLimit: async () => 100_000 }).queue,
      maxBodyBytes: 100_000,
      logger: within.logger,
    });
    const failing = logger();
    createReceiver({
      secret: SECRET,
      queue: sizedQueue(0, { bodyLimit: async () => Promise.reject(new Error('AccessDenied')) }).queue,
      logger: failing.logger,
    });
    // SQS at its 1 MiB maximum carries all but what its attributes take: nothing to act on, nothing said.
    const sliver = logger();
    createReceiver({ secret: SECRET, queue: sizedQueue(0, { bodyLimit: async () => 1_039_299 }).queue, logger: sliver.logger });
    await tick();
    expect(within.lines).toEqual([]);
    expect(sliver.lines).toEqual([]);
    expect(failing.lines[0]?.[1]).toMatch(/could not read the sized queue's message size limit \(AccessDenied\)/);
  });
});
