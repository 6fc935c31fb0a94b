// What sqsQueue() and sqsHandler() refuse, before anything reaches SQS.
import { createReceiver, memoryStore } from '@hookline/core';
import { memoryQueue } from '@hookline/testing';
import { describe, expect, it } from 'vitest';
import { sqsHandler } from './sqs-handler';
import { sqsQueue } from './sqs-queue';

const client = { send: async () => ({}) };
const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/hookline';

describe('sqsQueue options', () => {
  it('refuses a client that is not one, a queue URL that is a name, and out-of-range numbers', () => {
    expect(() => sqsQueue({ client: {} as never, queueUrl })).toThrow(/SQSClient/);
    expect(() => sqsQueue({ client, queueUrl: 'hookline' })).toThrow(/queue's URL/);
    expect(() => sqsQueue({ client, queueUrl, attempts: 0 })).toThrow(/attempts/);
    expect(() => sqsQueue({ client, queueUrl, waitTimeMs: 21_000 })).toThrow(/at most 20/);
    expect(() => sqsQueue({ client, queueUrl, waitTimeSeconds: 1 } as never)).toThrow(
      new TypeError('sqsQueue: `waitTimeSeconds` is now `waitTimeMs`'),
    );
    expect(() => sqsQueue({ client, queueUrl, maxStalls: -1 })).toThrow(/maxStalls/);
    expect(() => sqsQueue({ client, queueUrl, backoff: { type: 'fixed', delayMs: Number.NaN } })).toThrow(/backoff/);
    expect(() => sqsQueue({ client, queueUrl, maxMessageBytes: 2_000_000 })).toThrow(/from 1024 to 1048576/);
    expect(sqsQueue({ client, queueUrl }).name).toBe('sqs');
  });

  it('refuses a backoff that waits 14 days or more before a try: SQS would delete the message first', () => {
    expect(() => sqsQueue({ client, queueUrl, attempts: 20, backoff: { type: 'exponential', delayMs: 10_000 } })).toThrow(
      /waits 2621440000 ms before the last try, and SQS keeps a message at most 14 days/,
    );
    expect(() => sqsQueue({ client, queueUrl, attempts: 2, backoff: { type: 'fixed', delayMs: 14 * 86_400_000 } })).toThrow(/14 days/);
    expect(sqsQueue({ client, queueUrl, attempts: 7 }).name).toBe('sqs'); // 10 s doubling: 320 s before the last
  });

  it('says how to find the dead-letter queue when the queue has no redrive policy', async () => {
    const queue = sqsQueue({ client: { send: async () => ({ Attributes: {} }) }, queueUrl });
    await expect(queue.deadLetterQueueUrl()).rejects.toThrow(
      /no redrive policy naming a dead-letter queue; give the queue one, or pass deadLetterQueueUrl/,
    );
  });

  it('keeps its job records under `prefix` in the store, and refuses the old `keyPrefix`', async () => {
    expect(() => sqsQueue({ client, queueUrl, keyPrefix: 'mine:' } as never)).toThrow(
      new TypeError('sqsQueue: `keyPrefix` is now `prefix`'),
    );
    const store = memoryStore();
    const queue = sqsQueue({ client, queueUrl, store, prefix: 'mine:', maxMessageBytes: 262_144 });
    const delivery = { event: 'x', deliveryId: 'wdl_prefixed', timestamp: new Date().toISOString(), data: {} };
    expect(await queue.enqueue({ delivery, receivedAt: 0, secretIndex: 0 })).toEqual({ duplicate: false });
    expect((await store.claim('mine:job:wdl_prefixed', 'probe', 1_000)).state).not.toBe('acquired');
    expect((await store.claim('hookline:sqs:hookline:job:wdl_prefixed', 'probe', 1_000)).state).toBe('acquired');
  });

  it('bounds a call to SQS that never answers by commandTimeoutMs', async () => {
    // The queue's limit given, so the receiver-less queue reads no attributes from a client that never answers.
    const queue = sqsQueue({ client: { send: () => new Promise(() => {}) }, queueUrl, commandTimeoutMs: 50, maxMessageBytes: 1_048_576 });
    const job = {
      delivery: { event: 'x', deliveryId: 'wdl_1', timestamp: new Date().toISOString(), data: {} },
      receivedAt: 0,
      secretIndex: 0,
    };
    await expect(queue.enqueue(job)).rejects.toThrow(/did not finish within 50 ms/);
  });
});

describe('sqsHandler', () => {
  it('needs a receiver whose queue is an SQS queue', () => {
    expect(() => sqsHandler({})).toThrow(/the receiver createReceiver\(\) returned/);
    expect(() => sqsHandler(createReceiver({ secret: 'whsec_x' }))).toThrow(/needs an SQS queue/);
    expect(() => sqsHandler(createReceiver({ secret: 'whsec_x', queue: memoryQueue() }))).toThrow(/needs an SQS queue/);
    const store = memoryStore();
    // The queue's limit given: the stub client has no attributes to read.
    const maxMessageBytes = 1_048_576;
    expect(() =>
      sqsHandler(createReceiver({ secret: 'whsec_x', store, queue: sqsQueue({ client, queueUrl, store, maxMessageBytes }) }), {
        concurrency: 0,
      }),
    ).toThrow(/concurrency/);
    // Consuming needs the store's records: a queue without one is refused, saying why.
    expect(() => sqsHandler(createReceiver({ secret: 'whsec_x', queue: sqsQueue({ client, queueUrl, maxMessageBytes }) }))).toThrow(
      /has no store, and consuming needs one/,
    );
  });
});
