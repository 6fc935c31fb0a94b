// The AWS deployment shape end to end against the SQS test server: API Gateway → webhookHandler (web
// function, answer-fast) → SQS → sqsHandler (worker function), the worker driven with SQS events as
// Lambda's event source mapping delivers them (support/event-source-mapping.ts).
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PermanentFailure } from '@hookline/core';
import { sqsHandler } from '@hookline/sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { type DeploymentOptions, deployment as deploy, functionUrlEvent, newId } from './support/deployment';
import type { TestQueues } from './support/sqs-queues';

let server: RunningSqsServer;
const opened: TestQueues[] = [];

beforeAll(async () => {
  server = await startSqsServer();
});
afterEach(async () => {
  for (const queues of opened.splice(0)) await queues.remove();
});
afterAll(async () => {
  await server?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const deployment = (options: DeploymentOptions = {}) => deploy(server, opened, options);

describe('sqsHandler behind an event source mapping', () => {
  it('answers 202 on the web side, runs the handler once in the worker, and answers a repeat as a duplicate', async () => {
    const { web, worker, receiver } = await deployment();
    const runs: string[] = [];
    receiver.on('message.delivered', (delivery) => void runs.push((delivery.data as unknown as { note: string }).note));
    const deliveryId = newId();
    const answer = await web(functionUrlEvent(deliveryId));
    expect(answer.statusCode).toBe(202);
    const { records, response } = await worker.invoke();
    expect(records).toHaveLength(1);
    expect(records[0]?.messageAttributes['hookline-delivery-id']?.stringValue).toBe(deliveryId);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(runs).toEqual(['Grüße 🎉']);
    expect((await web(functionUrlEvent(deliveryId))).statusCode).toBe(200);
    expect((await worker.invoke()).records).toEqual([]);
  });

  it('retries a failed record as a delayed copy carrying its try, and leaves nothing for Lambda to redeliver', async () => {
    const { web, worker, receiver, queue } = await deployment({ attempts: 3, retryMs: 1_000 });
    const runs: number[] = [];
    receiver.on('message.delivered', () => {
      runs.push(Date.now());
      if (runs.length === 1) throw new Error('database down');
    });
    await web(functionUrlEvent(newId()));
    const first = await worker.invoke();
    expect(first.response).toEqual({ batchItemFailures: [] });
    const second = await worker.invoke(3);
    expect(second.records[0]?.messageAttributes['hookline-tries']?.stringValue).toBe('1');
    expect(second.records[0]?.attributes.ApproximateReceiveCount).toBe('1');
    expect(runs).toHaveLength(2);
    expect((runs[1] as number) - (runs[0] as number)).toBeGreaterThanOrEqual(900);
    expect(await queue.deadLetters()).toEqual([]);
  });

  it('dead-letters a PermanentFailure with its reason and scope-less identity; replay runs it through the mapping again', async () => {
    const { web, worker, receiver, queue } = await deployment();
    let fail = true;
    const runs: string[] = [];
    receiver.on('message.delivered', (delivery) => {
      runs.push(delivery.deliveryId);
      if (fail) throw new PermanentFailure('unknown line');
    });
    const deliveryId = newId();
    await web(functionUrlEvent(deliveryId));
    await worker.invoke();
    const [letter] = await queue.deadLetters();
    expect(letter).toMatchObject({ deliveryId, event: 'message.delivered', attempts: 1, lastError: 'PermanentFailure: unknown line' });
    expect(letter?.scope).toBeUndefined();
    fail = false;
    expect(await queue.replay(letter as NonNullable<typeof letter>)).toBe(true);
    expect(await queue.deadLetters()).toEqual([]);
    await worker.invoke();
    expect(runs).toEqual([deliveryId, deliveryId]);
    // The service replays the delivery again: it ran to success, so it is a duplicate.
    expect((await web(functionUrlEvent(deliveryId))).statusCode).toBe(200);
  });

  it('hands back a record still running when the invocation runs short of time: returned in time, no try spent, run again after the lease', async () => {
    // maxRunMs (past the hand-back) stands in for Lambda freezing the execution environment after the
    // invocation: the hung handler's lease stops being renewed and lapses.
    const { web, worker, receiver, queue } = await deployment({ leaseMs: 1_000, maxRunMs: 4_000 });
    const runs: number[] = [];
    receiver.on('message.delivered', () => {
      runs.push(Date.now());
      if (runs.length === 1) return new Promise<void>(() => {}); // outlives the invocation
    });
    await web(functionUrlEvent(newId()));
    const started = Date.now();
    // 6 s left, 3 s kept back: the hand-back comes after about 3 s, and the answer before Lambda's timeout.
    const first = await worker.invoke(1, 6_000);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(first.response).toEqual({ batchItemFailures: [] });
    const tries: (string | undefined)[] = [];
    for (let i = 0; runs.length < 2 && i < 8; i++) {
      const next = await worker.invoke(3);
      tries.push(...next.records.map((record) => record.messageAttributes['hookline-tries']?.stringValue));
    }
    expect(runs).toHaveLength(2);
    expect(new Set(tries)).toEqual(new Set(['0']));
    expect(await queue.deadLetters()).toEqual([]);
  });

  it('on a FIFO queue, leaves a copy received before it is due in the queue (batchItemFailures) without running it', async () => {
    const { web, worker, receiver } = await deployment({ fifo: true, retryMs: 2_000 });
    const runs: number[] = [];
    receiver.on('message.delivered', () => {
      runs.push(Date.now());
      if (runs.length === 1) throw new Error('try again');
    });
    await web(functionUrlEvent(newId()));
    await worker.invoke();
    const early = await worker.invoke();
    expect(early.records).toHaveLength(1);
    expect(early.response?.batchItemFailures).toEqual([{ itemIdentifier: early.records[0]?.messageId }]);
    expect(runs).toHaveLength(1);
    let due = await worker.invoke(3);
    for (let i = 0; due.records.length === 0 && i < 3; i++) due = await worker.invoke(3);
    expect(due.response).toEqual({ batchItemFailures: [] });
    expect((runs[1] as number) - (runs[0] as number)).toBeGreaterThanOrEqual(1_900);
  });

  it('dead-letters a message whose consumers kept stopping before a result, without running it', async () => {
    const { web, worker, receiver, queue, queues } = await deployment({ maxStalls: 2 });
    let runs = 0;
    receiver.on('message.delivered', () => void runs++);
    const deliveryId = newId();
    await web(functionUrlEvent(deliveryId));
    // Three invocations that died (timed out) with the record: received, never settled.
    for (let i = 0; i < 3; i++) {
      await queues.client.send(new ReceiveMessageCommand({ QueueUrl: queues.queueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 1 }));
    }
    expect((await worker.invoke()).response).toEqual({ batchItemFailures: [] });
    expect(runs).toBe(0);
    const [letter] = await queue.deadLetters();
    expect(letter).toMatchObject({ deliveryId, attempts: 1 });
    expect(letter?.lastError).toMatch(/stalled 3 times/);
  });

  it('keeps a record from a queue the handler was not made for, and says which', async () => {
    const { web, receiver, workerReceiver, errors, queues } = await deployment();
    receiver.on('message.delivered', () => {});
    await web(functionUrlEvent(newId()));
    const handler = sqsHandler(workerReceiver);
    const { Messages } = await queues.client.send(
      new ReceiveMessageCommand({
        QueueUrl: queues.queueUrl,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const message = Messages?.[0];
    const answer = await handler({
      Records: [
        {
          messageId: message?.MessageId as string,
          receiptHandle: message?.ReceiptHandle as string,
          body: message?.Body as string,
          attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()) },
          messageAttributes: {},
          eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:another-queue',
        },
      ],
    });
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: message?.MessageId }]);
    expect(errors[0]?.message).toMatch(/another-queue reached the handler of queue/);
  });

  it('with a web function without a store, enqueues every time and still runs the handler once (the worker’s claim)', async () => {
    const { web, worker, receiver } = await deployment({ webWithoutStore: true });
    let runs = 0;
    receiver.on('message.delivered', () => void runs++);
    const deliveryId = newId();
    await web(functionUrlEvent(deliveryId));
    await worker.invoke();
    expect(runs).toBe(1);
    // The web side cannot tell it was queued: a repeat is handed to the queue again.
    expect((await web(functionUrlEvent(deliveryId))).statusCode).toBe(202);
    await worker.invoke();
    await sleep(100);
    expect(runs).toBe(1);
  });
});
