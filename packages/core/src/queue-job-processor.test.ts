// queueJobProcessor(): the worker's processing of one job for a consumer the platform pushes jobs to,
// without receiver.work() and without a queue given to the receiver.
import { describe, expect, it } from 'vitest';
import { PermanentFailure } from './errors';
import { memoryStore } from './memory-store';
import type { QueuedDelivery } from './queue';
import { queueJobProcessor } from './queue-job-processor';
import { createReceiver } from './receiver';
import { envelope, SECRET } from './test-support';

const job = (): QueuedDelivery => ({
  delivery: envelope() as unknown as QueuedDelivery['delivery'],
  receivedAt: Date.now(),
  secretIndex: 0,
});

describe('queueJobProcessor', () => {
  it('runs a job through the handlers once, in the work: key space, and answers done (a second hand-over is a duplicate)', async () => {
    const store = memoryStore();
    const receiver = createReceiver({ secret: SECRET, store });
    const runs: string[] = [];
    receiver.on('message.delivered', ({ deliveryId }) => void runs.push(deliveryId));
    const process = queueJobProcessor(receiver);
    const payload = job();
    expect(await process({ payload, attempt: 1, maxAttempts: 3 })).toEqual({ status: 'done' });
    expect(await process({ payload, attempt: 1, maxAttempts: 3 })).toEqual({ status: 'done' });
    expect(runs).toEqual([payload.delivery.deliveryId]);
    expect(store.claim(`hookline:work:${payload.delivery.deliveryId}`, 'other', 1_000)).toEqual({ state: 'completed' });
  });

  it('answers dead for PermanentFailure and for a corrupt payload, and rejects for a failure (a retry)', async () => {
    const receiver = createReceiver({ secret: SECRET }).onError(() => {});
    let failure: Error = new PermanentFailure('no such line');
    receiver.on('message.delivered', () => {
      throw failure;
    });
    const process = queueJobProcessor(receiver);
    expect(await process({ payload: job(), attempt: 1, maxAttempts: 3 })).toEqual({
      status: 'dead',
      reason: 'PermanentFailure: no such line',
    });
    expect(await process({ payload: 'not a job', attempt: 1, maxAttempts: 3 })).toMatchObject({ status: 'dead', reason: /corrupt/ });
    failure = new Error('database down');
    await expect(process({ payload: job(), attempt: 1, maxAttempts: 3 })).rejects.toThrow('database down');
  });

  it('refuses at once what createReceiver() did not make, a copy of a receiver included', () => {
    const receiver = createReceiver({ secret: SECRET });
    for (const other of [{}, { ...receiver }, null]) {
      expect(() => queueJobProcessor(other as object)).toThrow(expect.objectContaining({ code: 'CONFIGURATION_ERROR' }));
    }
  });
});
