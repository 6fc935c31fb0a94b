// A job on SQS handed out more than once: handlers longer than the queue's visibility timeout (the
// long-polling worker renews it while the job runs), two consumers holding one message at once (its
// visibility lapsed), and SQS's at-least-once delivery (a deleted message received again), with the
// SQS test server making every deletion leave a copy behind. No job runs more often than its tries.
import { createReceiver, memoryStore, type Receiver } from '@hookline/core';
import { sqsQueue } from '@hookline/sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { deployment, functionUrlEvent, newId, SECRET } from './support/deployment';
import { type TestQueues, testQueues } from './support/sqs-queues';

let server: RunningSqsServer;
let duplicating: RunningSqsServer;
const opened: TestQueues[] = [];
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  [server, duplicating] = await Promise.all([startSqsServer(), startSqsServer({ duplicateRate: 1, seed: 50 })]);
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const queues of opened.splice(0)) await queues.remove();
});
afterAll(async () => {
  await Promise.all([server?.stop(), duplicating?.stop()]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !(await check()) && Date.now() < end; ) await sleep(100);
}

describe('a handler longer than the visibility timeout', () => {
  it('keeps its message hidden while it runs (long-polling workers): a failing 2.5 s handler with attempts 2 runs twice', async () => {
    const queues = await testQueues(server, { visibilityTimeout: 1 });
    opened.push(queues);
    const store = memoryStore();
    const options = {
      client: queues.client,
      queueUrl: queues.queueUrl,
      deadLetterQueueUrl: queues.deadLetterQueueUrl,
      store,
      attempts: 2,
      backoff: { type: 'fixed' as const, delayMs: 1_000 },
      waitTimeMs: 1_000,
      onError: () => {},
    };
    const runs: string[] = [];
    // Two worker processes on one store and one queue.
    const receivers: Receiver[] = [1, 2].map(() =>
      createReceiver({ secret: SECRET, store, queue: sqsQueue(options), leaseMs: 1_000, maxRunMs: 30_000 })
        .on('message.delivered', async ({ deliveryId }) => {
          runs.push(deliveryId);
          await sleep(2_500);
          throw new Error('downstream down');
        })
        .onError(() => {}),
    );
    for (const receiver of receivers) {
      const worker = receiver.work({ concurrency: 2 });
      closers.push(() => worker.close());
    }
    const queue = sqsQueue(options);
    await queue.enqueue({
      delivery: { event: 'message.delivered', deliveryId: newId(), timestamp: new Date().toISOString(), data: {} },
      receivedAt: Date.now(),
      secretIndex: 0,
    });
    await until(async () => (await queue.deadLetters()).length === 1, 20_000);
    await sleep(2_000);
    expect(runs).toHaveLength(2);
    expect((await queue.deadLetters())[0]).toMatchObject({ attempts: 2, lastError: 'Error: downstream down' });
  }, 60_000);

  it('lets one message held by two consumers at once (its visibility lapsed) go on as one job', async () => {
    // The function's timeout above the queue's visibility timeout: a misconfiguration Lambda refuses,
    // here to have two invocations hold one record at once.
    const { web, worker, receiver, queue } = await deployment(server, opened, {
      visibilityTimeout: 1,
      attempts: 2,
      retryMs: 1_000,
      leaseMs: 1_000,
    });
    const runs: number[] = [];
    receiver.on('message.delivered', async () => {
      runs.push(Date.now());
      await sleep(2_500);
      throw new Error('downstream down');
    });
    await web(functionUrlEvent(newId()));
    const first = worker.invoke();
    await sleep(1_500);
    const second = worker.invoke(); // the same record, handed out again: the other run holds its delivery
    await Promise.all([first, second]);
    await until(async () => {
      await worker.invoke(1);
      return (await queue.deadLetters()).length === 1;
    }, 30_000);
    for (let i = 0; i < 3; i++) await worker.invoke(1);
    // The first run's failure, and at most one try left uncounted by the race (see successors.ts).
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.length).toBeLessThanOrEqual(3);
    expect(await queue.deadLetters()).toHaveLength(1);
  }, 60_000);
});

describe('at-least-once delivery: every deleted message received again', () => {
  it('runs a job that succeeds once, and a failing job with attempts 2 twice, with one dead letter', async () => {
    const { web, worker, receiver, queue } = await deployment(duplicating, opened, {
      visibilityTimeout: 1,
      attempts: 2,
      retryMs: 1_000,
      leaseMs: 1_000,
    });
    const [succeeds, fails] = [newId(), newId()];
    const runs: string[] = [];
    receiver.on('message.delivered', ({ deliveryId }) => {
      runs.push(deliveryId);
      if (deliveryId === fails) throw new Error('downstream down');
    });
    await web(functionUrlEvent(succeeds));
    await web(functionUrlEvent(fails));
    for (let i = 0; i < 10; i++) await worker.invoke(1);
    expect(runs.filter((id) => id === succeeds)).toHaveLength(1);
    expect(runs.filter((id) => id === fails)).toHaveLength(2);
    expect((await queue.deadLetters()).map((letter) => letter.deliveryId)).toEqual([fails]);
    expect(await duplicating.duplicatesLeft(queue.queueUrl.split('/').pop() as string)).toBeGreaterThan(0);
  }, 60_000);
});
