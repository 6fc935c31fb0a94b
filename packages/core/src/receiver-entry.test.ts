// The job entry a platform-invoked consumer (sqsHandler) runs jobs through: the same processing as
// receiver.work(), without the receiver's worker or the queue's own fetching.
import { describe, expect, it } from 'vitest';
import { PermanentFailure } from './errors';
import { queueJobEntry } from './receiver-entry';
import { memoryStore } from './memory-store';
import type { DeliveryQueue, QueuedDelivery } from './queue';
import { createReceiver } from './receiver';
import { envelope, SECRET } from './test-support';

const queue: DeliveryQueue = {
  name: 'handed-in',
  enqueue: async () => ({ duplicate: false }),
  work: () => {
    throw new Error('a platform-invoked consumer never calls work()');
  },
  deadLetters: async () => [],
  replay: async () => false,
  replayAll: async () => 0,
  close: async () => {},
};

const job = (): QueuedDelivery => ({
  delivery: envelope() as unknown as QueuedDelivery['delivery'],
  receivedAt: Date.now(),
  secretIndex: 0,
});

describe('queueJobEntry', () => {
  it('runs a job through the handlers once: done, then done again as a duplicate without running them', async () => {
    const receiver = createReceiver({ secret: SECRET, store: memoryStore(), queue, leaseMs: 4_000 });
    const runs: string[] = [];
    receiver.on('message.delivered', (delivery) => void runs.push(delivery.deliveryId));
    const entry = queueJobEntry(receiver);
    expect(entry?.queue).toBe(queue);
    expect(entry?.leaseMs).toBe(4_000);
    const payload = job();
    expect(await entry?.process({ payload, attempt: 1, maxAttempts: 3 })).toEqual({ status: 'done' });
    expect(await entry?.process({ payload, attempt: 1, maxAttempts: 3 })).toEqual({ status: 'done' });
    expect(runs).toEqual([payload.delivery.deliveryId]);
  });

  it('says dead for a PermanentFailure and a corrupt payload, and rejects for a failure', async () => {
    const receiver = createReceiver({ secret: SECRET, store: memoryStore(), queue }).onError(() => {});
    let fail: 'permanent' | 'transient' = 'permanent';
    receiver.on('message.delivered', () => {
      if (fail === 'permanent') throw new PermanentFailure('unknown line');
      throw new Error('database down');
    });
    const entry = queueJobEntry(receiver);
    expect(await entry?.process({ payload: job(), attempt: 1, maxAttempts: 3 })).toEqual({
      status: 'dead',
      reason: 'PermanentFailure: unknown line',
      kind: 'permanent',
    });
    expect(await entry?.process({ payload: 'not a job', attempt: 1, maxAttempts: 3 })).toMatchObject({
      status: 'dead',
      reason: expect.stringMatching(/^corrupt job/),
      kind: 'corrupt',
    });
    fail = 'transient';
    await expect(entry?.process({ payload: job(), attempt: 1, maxAttempts: 3 })).rejects.toThrow('database down');
  });

  it('finds nothing on what is not a receiver, and no queue on a receiver without one', () => {
    expect(queueJobEntry({ handle: () => {} })).toBeUndefined();
    expect(queueJobEntry(undefined)).toBeUndefined();
    expect(queueJobEntry(createReceiver({ secret: SECRET }))?.queue).toBeUndefined();
    expect(Object.keys(createReceiver({ secret: SECRET }))).not.toContain('process');
  });
});
