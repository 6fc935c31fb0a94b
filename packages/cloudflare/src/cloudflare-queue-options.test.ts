// What cloudflareQueue() and queueConsumer() refuse when they are made, before any binding is used.
import { createReceiver } from '@hookline/core';
import { describe, expect, it } from 'vitest';
import { type CloudflareQueueOptions, cloudflareQueue } from './cloudflare-queue';
import { queueConsumer } from './queue-consumer';

const binding = { send: async () => {} };
const namespace = {
  idFromName: (name: string) => name,
  get: () => ({ fetch: async () => new Response('{}') }),
};

describe('cloudflareQueue() and queueConsumer() options', () => {
  it('refuses a missing binding or namespace, and out-of-range retries, delays and retentions', () => {
    expect(() => cloudflareQueue(undefined as never, { namespace })).toThrow(/Queue producer binding/);
    expect(() => cloudflareQueue(binding, {} as CloudflareQueueOptions)).toThrow(/HooklineStoreObject binding/);
    for (const maxRetries of [-1, 1.5, 101]) expect(() => cloudflareQueue(binding, { namespace, maxRetries })).toThrow(/maxRetries/);
    for (const delayMs of [-1, Number.NaN, 43_200_001]) {
      expect(() => cloudflareQueue(binding, { namespace, backoff: { type: 'fixed', delayMs } })).toThrow(/delayMs/);
    }
    expect(() => cloudflareQueue(binding, { namespace, backoff: { type: 'fixed', delaySeconds: 1 } as never })).toThrow(
      new TypeError('cloudflareQueue: `delaySeconds` is now `delayMs`'),
    );
    expect(() => cloudflareQueue(binding, { namespace, keepCompletedMs: 0 })).toThrow(/keepCompletedMs/);
    expect(() => cloudflareQueue(binding, { namespace, keepDeadLettersMs: Number.NaN })).toThrow(/keepDeadLettersMs/);
    expect(() => cloudflareQueue(binding, { namespace, shards: 0 })).toThrow(/shards/);
  });

  it('makes queueConsumer() refuse what is not a receiver, or not a cloudflareQueue()', () => {
    const queue = cloudflareQueue(binding, { namespace });
    expect(() => queueConsumer({}, { queue })).toThrow(expect.objectContaining({ code: 'CONFIGURATION_ERROR' }));
    const receiver = createReceiver({ secret: 'whsec_options', queue });
    expect(() => queueConsumer(receiver, { queue: {} as never })).toThrow(/cloudflareQueue\(\.\.\.\)/);
    expect(() => receiver.work()).toThrow(expect.objectContaining({ code: 'CONFIGURATION_ERROR' }));
  });

  it('refuses a concurrency that is not a positive integer when a batch comes', async () => {
    const queue = cloudflareQueue(binding, { namespace });
    const batch = { queue: 'q', messages: [] };
    await expect(queue.consume(batch, async () => ({ status: 'done' }), { concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(queue.consume(batch, async () => ({ status: 'done' }))).resolves.toBeUndefined();
  });
});
