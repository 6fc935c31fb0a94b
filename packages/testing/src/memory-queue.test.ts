// memoryQueue() against the queue conformance suite, plus what only an in-memory queue can show: a job
// its worker never settles is taken back (stalled), and a stalled job's late result is ignored.
import { createReceiver } from '@hookline/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDelivery } from './create-delivery';
import { toBytes } from './sign';
import { createSignedPayload } from './signed-request';
import { describeQueueConformance } from './conformance/describe-queue-conformance';
import { memoryQueue } from './memory-queue';

describeQueueConformance('memoryQueue', ({ attempts, retryDelayMs }) => {
  const queue = memoryQueue({ attempts, backoff: { type: 'fixed', delayMs: retryDelayMs } });
  return { queue, addCorruptJob: async (deliveryId) => queue.addRaw(deliveryId, `{"delivery":{"deliveryId":"${deliveryId}"`) };
});

describe('memoryQueue', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const job = (deliveryId: string) => ({
    delivery: { event: 'message.sent', deliveryId, timestamp: new Date().toISOString(), data: {} },
    receivedAt: Date.now(),
    secretIndex: 0,
  });

  it('takes back a job whose processor never settles, runs it again, and ignores the stalled run if it settles late', async () => {
    vi.useFakeTimers();
    const queue = memoryQueue({ stalledAfterMs: 1_000, maxStalls: 1 });
    const settleFirst: ((value: { status: 'done' }) => void)[] = [];
    const attempts: number[] = [];
    queue.work(
      ({ attempt }) => {
        attempts.push(attempt);
        return new Promise((resolve) => settleFirst.push(resolve));
      },
      { concurrency: 2 },
    );
    await queue.enqueue(job('wdl_stall'));
    await vi.advanceTimersByTimeAsync(10);
    expect(attempts).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(attempts).toEqual([1, 1]); // a stall spends no try
    settleFirst[0]?.({ status: 'done' }); // the stalled run's late answer
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.job('wdl_stall')?.state).toBe('active');
    await vi.advanceTimersByTimeAsync(1_000); // a second stall: past maxStalls
    expect(queue.job('wdl_stall')).toMatchObject({
      state: 'dead',
      lastError: 'stalled 2 times: its worker never finished it',
      deadKind: 'stalled',
    });
  });

  it("keeps why each dead job is dead: the worker's kind, its tries used up, or its stalls; and forgets it on revival", async () => {
    vi.useFakeTimers();
    const queue = memoryQueue({ attempts: 2, backoff: { type: 'fixed', delayMs: 10 } });
    queue.work(
      async ({ payload }) => {
        const id = (payload as ReturnType<typeof job>).delivery.deliveryId;
        if (id === 'wdl_permanent') return { status: 'dead', reason: 'PermanentFailure: no such line', kind: 'permanent' };
        if (id === 'wdl_tries') throw new Error('database down');
        return { status: 'done' };
      },
      { concurrency: 2 },
    );
    await queue.enqueue(job('wdl_permanent'));
    await queue.enqueue(job('wdl_tries'));
    await queue.enqueue(job('wdl_fine'));
    await vi.advanceTimersByTimeAsync(100);
    expect(queue.job('wdl_permanent')).toMatchObject({ state: 'dead', deadKind: 'permanent' });
    expect(queue.job('wdl_tries')).toMatchObject({ state: 'dead', deadKind: 'tries', lastError: 'database down' });
    expect(queue.job('wdl_fine')).toMatchObject({ state: 'completed', deadKind: undefined });
    await queue.enqueue(job('wdl_tries'));
    expect(queue.job('wdl_tries')?.deadKind).toBeUndefined();
  });

  it('with maxJobBytes, refuses a larger job with JobTooLargeError, which the receiver handles in the request', async () => {
    const queue = memoryQueue({ maxJobBytes: 4_000 });
    expect(await queue.bodyLimitBytes?.()).toBe(2_976);
    const secret = 'whsec_memory_queue';
    const runs: string[] = [];
    const receiver = createReceiver({ secret, queue, logger: false }).on('*', ({ deliveryId }) => void runs.push(deliveryId));
    const delivery = createDelivery('message.delivered', { note: 'x'.repeat(5_000) });
    const payload = createSignedPayload(delivery, secret);
    const answer = await receiver.handle({ body: toBytes(payload.body), headers: payload.headers });
    expect(answer.status).toBe(200);
    expect(runs).toEqual([delivery.deliveryId]);
    expect(queue.jobs()).toEqual([]);
    await expect(queue.enqueue({ delivery, receivedAt: Date.now(), secretIndex: 0 })).rejects.toMatchObject({ code: 'JOB_TOO_LARGE' });
  });

  it('refuses attempts that are not a positive integer', () => {
    expect(() => memoryQueue({ attempts: 0 })).toThrow(/attempts must be an integer ≥ 1/);
  });
});
