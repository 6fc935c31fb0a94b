// A queue job's fence (QueueJob.signal): a consumer whose platform can suspend it (a Lambda execution
// environment frozen and thawed) aborts it once the job was handed back and its lease may have lapsed;
// the handlers' context.signal is then aborted with a LeaseLostError on the delivery's key.
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from './errors';
import { memoryStore } from './memory-store';
import type { QueuedDelivery } from './queue';
import { createReceiver } from './receiver';
import { queueJobEntry } from './receiver-entry';
import { envelope, SECRET } from './test-support';

const job = (delivery: Record<string, unknown>, signal?: AbortSignal) => ({
  payload: { delivery, receivedAt: Date.now(), secretIndex: 0 } as unknown as QueuedDelivery,
  attempt: 1,
  maxAttempts: 3,
  ...(signal === undefined ? {} : { signal }),
});

describe("a queue job's fence", () => {
  it("aborts the running handler's signal with a LeaseLostError naming the delivery's key, its cause the consumer's reason", async () => {
    const receiver = createReceiver({ secret: SECRET, store: memoryStore(), logger: false });
    let signal: AbortSignal | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    receiver.on('message.delivered', async (_delivery, context) => {
      signal = context.signal;
      started();
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      context.signal.throwIfAborted();
    });
    const fence = new AbortController();
    const delivery = envelope();
    const result = queueJobEntry(receiver)?.process(job(delivery, fence.signal));
    await running;
    expect(signal?.aborted).toBe(false);
    const thawed = new Error('frozen for 5000 ms');
    fence.abort(thawed);
    expect(signal?.aborted).toBe(true);
    const reason = signal?.reason as LeaseLostError;
    expect(LeaseLostError.is(reason)).toBe(true);
    expect(reason.key).toContain(String(delivery.deliveryId));
    expect(reason.cause).toBe(thawed);
    expect(reason.message).toContain(
      `the lease on ${String(delivery.deliveryId)} may have lapsed while its handlers ran (frozen for 5000 ms)`,
    );
    await expect(result).rejects.toBeDefined();
  });

  it('leaves a job that ended alone, and a job without a fence runs as before', async () => {
    const receiver = createReceiver({ secret: SECRET, store: memoryStore(), logger: false });
    const signals: AbortSignal[] = [];
    receiver.on('message.delivered', (_delivery, { signal }) => void signals.push(signal));
    const fence = new AbortController();
    expect(await queueJobEntry(receiver)?.process(job(envelope(), fence.signal))).toEqual({ status: 'done' });
    fence.abort(new Error('too late'));
    expect(await queueJobEntry(receiver)?.process(job(envelope()))).toEqual({ status: 'done' });
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false]);
  });
});
