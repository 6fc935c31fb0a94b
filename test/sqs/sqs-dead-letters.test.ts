// Dead letters beyond the conformance suite: a message the queue's redrive policy moved (its
// consumers kept dying before any result) is listed and replayed like the consumer's own; a delivery
// that died, was revived and died again is listed once; the dead-letter queue is found through the
// redrive policy when no URL is given.
import { randomBytes } from 'node:crypto';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { memoryStore } from '@hookline/core';
import type { QueuedDelivery } from '@hookline/core/adapter';
import { sqsQueue } from '@hookline/sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { type TestQueues, testQueues } from './support/sqs-queues';

let server: RunningSqsServer;
const opened: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startSqsServer();
});
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});
afterAll(async () => {
  await server?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function job(scope?: string): QueuedDelivery {
  return {
    delivery: {
      event: 'line.status_changed',
      deliveryId: `wdl_${randomBytes(12).toString('hex')}`,
      timestamp: new Date().toISOString(),
      data: { lineId: 'lin_1' },
    },
    receivedAt: Date.now(),
    secretIndex: 0,
    ...(scope === undefined ? {} : { scope }),
  };
}

async function setUp(maxReceiveCount: number): Promise<{ queues: TestQueues; queue: ReturnType<typeof sqsQueue> }> {
  const queues = await testQueues(server, { maxReceiveCount });
  opened.push(() => queues.remove());
  // No deadLetterQueueUrl: the queue reads it from its redrive policy.
  const queue = sqsQueue({ client: queues.client, queueUrl: queues.queueUrl, store: memoryStore(), attempts: 1, onError: () => {} });
  return { queues, queue };
}

describe('sqsQueue dead letters', () => {
  it('finds the dead-letter queue through the redrive policy, and lists and replays a message the policy moved there', async () => {
    const { queues, queue } = await setUp(2);
    expect(await queue.deadLetterQueueUrl()).toBe(queues.deadLetterQueueUrl);
    const queued = job('tenant-a:');
    await queue.enqueue(queued);
    // Consumers that died with the message twice; the next receive moves it.
    for (let i = 0; i < 3; i++)
      await queues.client.send(new ReceiveMessageCommand({ QueueUrl: queues.queueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 1 }));
    const [letter] = await queue.deadLetters();
    expect(letter).toMatchObject({ deliveryId: queued.delivery.deliveryId, scope: 'tenant-a:', event: 'line.status_changed', attempts: 1 });
    expect(letter?.lastError).toMatch(/redrive policy after 2 receives/);
    // Its job record was never released (no consumer got to it): the replay frees it with the letter's token.
    expect(await queue.enqueue(queued)).toEqual({ duplicate: true });
    expect(await queue.replay(letter as NonNullable<typeof letter>)).toBe(true);
    expect(await queue.deadLetters()).toEqual([]);
    const runs: unknown[] = [];
    const worker = queue.work(
      async ({ payload, attempt }) => {
        runs.push([(payload as QueuedDelivery).scope, attempt]);
        return { status: 'done' };
      },
      { concurrency: 1 },
    );
    opened.push(() => worker.close());
    for (let i = 0; i < 100 && runs.length === 0; i++) await sleep(50);
    expect(runs).toEqual([['tenant-a:', 1]]);
  });

  it('lists a delivery that died, was revived by an enqueue and died again once, with its latest failure', async () => {
    const { queue } = await setUp(10);
    const queued = job();
    let failures = 0;
    const worker = queue.work(
      async () => {
        failures += 1;
        return { status: 'dead', reason: `failure ${failures}` };
      },
      { concurrency: 1 },
    );
    opened.push(() => worker.close());
    await queue.enqueue(queued);
    // Revived only once it is a dead letter: the processor's answer comes before the consumer has
    // written the letter and released the job, and an enqueue in between is a duplicate.
    for (let i = 0; i < 100 && (await queue.deadLetters()).length < 1; i++) await sleep(100);
    expect(await queue.enqueue(queued)).toEqual({ duplicate: false });
    const diedTwice = async () => failures >= 2 && (await queue.deadLetters())[0]?.lastError === 'failure 2';
    for (let i = 0; i < 100 && !(await diedTwice()); i++) await sleep(100);
    const letters = await queue.deadLetters();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ deliveryId: queued.delivery.deliveryId, lastError: 'failure 2' });
  });

  it('says false for a replay of what is not a dead letter, and replays every letter with replayAll', async () => {
    const { queue } = await setUp(10);
    expect(await queue.replay('wdl_nothing')).toBe(false);
    const worker = queue.work(async () => ({ status: 'dead', reason: 'no' }), { concurrency: 2 });
    const jobs = [job(), job(), job('t:')];
    for (const one of jobs) await queue.enqueue(one);
    for (let i = 0; i < 100 && (await queue.deadLetters()).length < 3; i++) await sleep(100);
    await worker.close();
    expect(await queue.replayAll()).toBe(3);
    expect(await queue.deadLetters()).toEqual([]);
    for (const one of jobs) expect(await queue.enqueue(one)).toEqual({ duplicate: true });
  });
});
