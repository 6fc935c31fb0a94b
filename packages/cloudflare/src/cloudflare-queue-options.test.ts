// What cloudflareQueue() and queueConsumer() refuse when they are made, before any binding is used.
import { createReceiver } from '@hookline/core';
import { describe, expect, it } from 'vitest';
import { type CloudflareQueueOptions, cloudflareQueue } from './cloudflare-queue';
import { queueConsumer } from './queue-consumer';

const binding = { send: async () => {} };
const client = {
  idFromName: (name: string) => name,
  get: () => ({ fetch: async () => new Response('{}') }),
};

describe('cloudflareQueue() and queueConsumer() options', () => {
  it('refuses a missing binding or client, and out-of-range tries, delays and retentions', () => {
    expect(() => cloudflareQueue(undefined as never, { client })).toThrow(/Queue producer binding/);
    expect(() => cloudflareQueue(binding, {} as CloudflareQueueOptions)).toThrow(/HooklineStoreObject binding/);
    for (const attempts of [0, 1.5, 102]) expect(() => cloudflareQueue(binding, { client, attempts })).toThrow(/attempts/);
    for (const delayMs of [-1, Number.NaN, 86_400_001]) {
      expect(() => cloudflareQueue(binding, { client, backoff: { type: 'fixed', delayMs } })).toThrow(/delayMs/);
    }
    expect(() => cloudflareQueue(binding, { client, backoff: { type: 'fixed', delaySeconds: 1 } as never })).toThrow(
      new TypeError('cloudflareQueue: `delaySeconds` is now `delayMs`'),
    );
    expect(() => cloudflareQueue(binding, { client, keepCompletedMs: 0 })).toThrow(/keepCompletedMs/);
    expect(() => cloudflareQueue(binding, { client, keepDeadLettersMs: Number.NaN })).toThrow(/keepDeadLettersMs/);
    expect(() => cloudflareQueue(binding, { client, shards: 0 })).toThrow(/shards/);
  });

  it("speaks the queues' vocabulary: `attempts` counts every try, `client` is the binding, the old names refused", async () => {
    expect(() => cloudflareQueue(binding, { client, maxRetries: 3 } as never)).toThrow(
      new TypeError(
        'cloudflareQueue: `maxRetries` is now `attempts`, which counts every try, the first included (attempts = maxRetries + 1)',
      ),
    );
    expect(() => cloudflareQueue(binding, { namespace: client } as never)).toThrow(
      new TypeError('cloudflareQueue: `namespace` is now `client`'),
    );
    // By default a job has 4 tries, Queues' default max_retries (3) and the first: a failure on the
    // fourth delivery is dead-lettered here, one on the third is retried.
    for (const [attempts, settled] of [
      [3, 'retried'],
      [4, 'dead-lettered'],
    ] as const) {
      const done: string[] = [];
      const seen: number[] = [];
      const recording = {
        idFromName: (name: string) => name,
        get: () => ({
          fetch: async (_url: string, init?: { body?: string }) => {
            if ((JSON.parse(init?.body ?? '{}') as { op?: string }).op === 'job.dead') done.push('dead-lettered');
            return new Response(JSON.stringify('run'));
          },
        }),
      };
      const queue = cloudflareQueue(binding, { client: recording });
      const body = JSON.stringify({ hookline: 1, deliveryId: 'wdl_default', token: 't', sentAt: Date.now(), tries: 0, job: {} });
      const message = { id: 'm1', body, attempts, ack: () => {}, retry: () => void done.push('retried') };
      await queue.consume({ queue: 'q', messages: [message] }, async ({ maxAttempts }) => {
        seen.push(maxAttempts);
        throw new Error('down');
      });
      expect(seen).toEqual([4]);
      expect(done).toEqual([settled]);
    }
  });

  it('takes delays up to 24 hours, the longest Queues takes on send() and retry(), and caps a growing backoff there', async () => {
    expect(cloudflareQueue(binding, { client, backoff: { type: 'fixed', delayMs: 86_400_000 } }).name).toBe('cloudflare-queues');
    const queue = cloudflareQueue(binding, { client, attempts: 6, backoff: { type: 'exponential', delayMs: 20 * 3_600_000 } });
    const retried: unknown[] = [];
    const body = JSON.stringify({ hookline: 1, deliveryId: 'wdl_long', token: 't', sentAt: Date.now(), tries: 1, job: {} });
    const message = { id: 'm1', body, attempts: 1, ack: () => {}, retry: (options?: unknown) => void retried.push(options) };
    await queue.consume({ queue: 'q', messages: [message] }, async () => Promise.reject(new Error('down')), { onError: () => {} });
    expect(retried).toEqual([{ delaySeconds: 86_400 }]); // 40 hours by the backoff
  });

  it('keeps a dead letter’s error to 1,000 bytes of UTF-8, so that its record fits a key-value object’s 128 KiB', async () => {
    const sent: { op: string; dead?: { lastError: string } }[] = [];
    const recording = {
      idFromName: (name: string) => name,
      get: () => ({
        fetch: async (_url: string, init?: { body?: string }) => {
          sent.push(JSON.parse(init?.body ?? '{}'));
          return new Response(JSON.stringify('run'));
        },
      }),
    };
    const queue = cloudflareQueue(binding, { client: recording, attempts: 1 });
    const body = JSON.stringify({ hookline: 1, deliveryId: 'wdl_dead', token: 't', sentAt: Date.now(), tries: 0, job: {} });
    const message = { id: 'm1', body, attempts: 1, ack: () => {}, retry: () => {} };
    await queue.consume({ queue: 'q', messages: [message] }, async () => ({
      status: 'dead',
      reason: `PermanentFailure: ${'€'.repeat(5_000)}`,
    }));
    const lastError = sent.find((request) => request.op === 'job.dead')?.dead?.lastError as string;
    expect(new TextEncoder().encode(lastError).length).toBeLessThanOrEqual(1_000);
    expect(lastError).toMatch(/^PermanentFailure: €+…$/);
  });

  it('refuses a job larger than a Queues message with JobTooLargeError, and says the body it always carries', async () => {
    const queue = cloudflareQueue(binding, { client });
    const job = {
      delivery: {
        event: 'message.delivered',
        deliveryId: 'wdl_big',
        timestamp: new Date().toISOString(),
        data: { note: 'x'.repeat(130_000) },
      },
      receivedAt: Date.now(),
      secretIndex: 0,
    };
    await expect(queue.enqueue(job)).rejects.toMatchObject({ name: 'JobTooLargeError', code: 'JOB_TOO_LARGE', limitBytes: 127_900 });
    expect(await queue.bodyLimitBytes?.()).toBe(127_900 - 16 - 4_096);
  });

  it('makes queueConsumer() refuse what is not a receiver, or not a cloudflareQueue()', () => {
    const queue = cloudflareQueue(binding, { client });
    expect(() => queueConsumer({}, { queue })).toThrow(expect.objectContaining({ code: 'CONFIGURATION_ERROR' }));
    const receiver = createReceiver({ secret: 'whsec_options', queue });
    expect(() => queueConsumer(receiver, { queue: {} as never })).toThrow(/cloudflareQueue\(\.\.\.\)/);
    expect(() => receiver.work()).toThrow(expect.objectContaining({ code: 'CONFIGURATION_ERROR' }));
  });

  it('refuses a concurrency that is not a positive integer when a batch comes', async () => {
    const queue = cloudflareQueue(binding, { client });
    const batch = { queue: 'q', messages: [] };
    await expect(queue.consume(batch, async () => ({ status: 'done' }), { concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(queue.consume(batch, async () => ({ status: 'done' }))).resolves.toBeUndefined();
  });
});
