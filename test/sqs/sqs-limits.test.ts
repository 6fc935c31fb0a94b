// @hookline/sqs at SQS's documented limits, against the SQS test server and the AWS SDK: the message
// size (body and attributes counted), characters SQS refuses in an attribute, the 12 hours a message
// may be hidden from its receive, the FIFO deduplication interval, and the messages in flight.
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { createReceiver, memoryStore, PermanentFailure } from '@hookline/core';
import { sqsQueue } from '@hookline/sqs';
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

const deployment = (options: DeploymentOptions = {}) => deploy(server, opened, options);
const statusOf = (answer: unknown) => (answer as { statusCode: number }).statusCode;

/** A delivery whose body is `bytes` long (ASCII padding in `data.note`). */
function sized(deliveryId: string, bytes: number) {
  const base = Buffer.from(functionUrlEvent(deliveryId, { note: '' }).body, 'base64').length;
  return functionUrlEvent(deliveryId, { note: 'x'.repeat(bytes - base) });
}

describe('message size', () => {
  it('handles a delivery larger than the queue carries in the request (200), where it was answered 503 on every try', async () => {
    const { web, worker, receiver, queue } = await deployment();
    const runs: string[] = [];
    receiver.on('message.delivered', ({ deliveryId }) => void runs.push(deliveryId));
    const deliveryId = newId();
    // As large as the receiver takes (1 MiB): over what a 1 MiB SQS message carries with its attributes.
    const event = sized(deliveryId, 1_048_576); // the receiver's maxBodyBytes
    expect(Buffer.from(event.body, 'base64').length).toBeLessThanOrEqual(1_048_576);
    expect(statusOf(await web(event))).toBe(200);
    expect(runs).toEqual([deliveryId]);
    expect(JSON.parse((await web(event)).body as string)).toEqual({ ok: true, duplicate: true });
    expect((await worker.invoke()).records).toEqual([]);
    // What the queue says it always carries: 1 MiB less what hookline adds to a job and its messages.
    expect(await queue.bodyLimitBytes?.()).toBeGreaterThan(1_035_000);
    expect(await queue.bodyLimitBytes?.()).toBeLessThan(1_046_000);
  }, 30_000);

  it('dead-letters a job as large as the queue carries with its error, cut to 1,000 bytes: it runs once', async () => {
    const { web, worker, receiver, queue } = await deployment({ attempts: 1, maximumMessageSize: 65_536, visibilityTimeout: 1 });
    const runs: string[] = [];
    receiver.on('message.delivered', ({ deliveryId }) => {
      runs.push(deliveryId);
      throw new Error('€'.repeat(2_000)); // 6,000 bytes of error
    });
    const limit = (await queue.bodyLimitBytes?.()) as number;
    const deliveryId = newId();
    expect(statusOf(await web(sized(deliveryId, limit)))).toBe(202);
    for (let i = 0; i < 3; i++) await worker.invoke();
    expect(runs).toEqual([deliveryId]);
    const [letter] = await queue.deadLetters();
    expect(Buffer.byteLength(letter?.lastError as string)).toBeLessThanOrEqual(1_000);
    expect(letter?.lastError).toMatch(/^Error: €+…$/);
  }, 30_000);

  it('never cycles a job whose dead letter would not fit: a delivery at the largest size the queue took runs once', async () => {
    // The largest delivery the queue accepted before: a message of exactly MaximumMessageSize with its first attributes.
    const { web, worker, receiver } = await deployment({ attempts: 1, maximumMessageSize: 65_536, visibilityTimeout: 1 });
    const runs: string[] = [];
    receiver.on('message.delivered', ({ deliveryId }) => {
      runs.push(deliveryId);
      throw new Error('€'.repeat(2_000));
    });
    const deliveryId = newId();
    const answer = await web(sized(deliveryId, 65_536 - 400));
    for (let i = 0; i < 4; i++) await worker.invoke(2);
    expect(runs).toEqual([deliveryId]);
    // Handled in the request (the service retries the 500 there), or queued with room for its dead letter.
    expect([500, 202]).toContain(statusOf(answer));
  }, 30_000);
});

describe('characters SQS refuses in an attribute', () => {
  for (const invalidCharacters of ['reject', 'replace'] as const) {
    it(`queues and runs a deliveryId holding U+FFFE and U+FFFF with its exact id (SQS ${invalidCharacters}s them in bodies)`, async () => {
      const own = await startSqsServer({ invalidCharacters });
      try {
        const { web, worker, receiver } = await deploy(own, opened);
        const seen: string[] = [];
        receiver.on('message.delivered', ({ deliveryId }) => void seen.push(deliveryId));
        const deliveryId = `wdl_\ufffe${newId().slice(4)}\uffff`;
        expect(statusOf(await web(functionUrlEvent(deliveryId)))).toBe(202);
        await worker.invoke();
        expect(seen).toEqual([deliveryId]);
        for (const queues of opened.splice(0)) await queues.remove();
      } finally {
        await own.stop();
      }
    }, 30_000);
  }
});

describe('the 12 hours a message may be hidden', () => {
  it('hides a retry due in 13 hours within 12 hours of each receive, never refused, in steps', async () => {
    const { web, worker, receiver, queues, errors } = await deployment({ attempts: 2, retryMs: 13 * 3_600_000 });
    let runs = 0;
    receiver.on('message.delivered', () => {
      runs += 1;
      throw new Error('downstream down');
    });
    await web(functionUrlEvent(newId()));
    await worker.invoke(); // fails: the retry is sent delayed 15 minutes (SQS's longest), due in 13 hours
    await server.advanceClock(15 * 60_000 + 1_000);
    const early = await worker.invoke(2); // received before it is due: hidden
    expect(early.records).toHaveLength(1);
    expect(runs).toBe(1);
    const inFlight = async () =>
      (await queues.client.send(new GetQueueAttributesCommand({ QueueUrl: queues.queueUrl, AttributeNames: ['All'] }))).Attributes
        ?.ApproximateNumberOfMessagesNotVisible;
    await server.advanceClock(6 * 3_600_000);
    expect(await inFlight()).toBe('1'); // still hidden 6 hours on, not back after the visibility timeout
    expect(errors.map((error) => error.message).join('\n')).not.toMatch(/VisibilityTimeout/);
    await server.advanceClock(6 * 3_600_000);
    expect((await worker.invoke(2)).records).toHaveLength(1); // back after 12 hours: hidden again
    expect(runs).toBe(1);
    expect(errors).toEqual([]);
  }, 30_000);
});

describe('FIFO queues', () => {
  it('queues the service’s replay of a dead-lettered delivery within 5 minutes from a web function without a store', async () => {
    const { web, worker, receiver } = await deployment({ fifo: true, webWithoutStore: true });
    let runs = 0;
    receiver.on('message.delivered', () => {
      runs += 1;
      if (runs === 1) throw new PermanentFailure('unknown line');
    });
    const deliveryId = newId();
    await web(functionUrlEvent(deliveryId));
    await worker.invoke();
    expect(runs).toBe(1);
    // The service replays it a minute later: a new receipt of the same deliveryId.
    expect(statusOf(await web(functionUrlEvent(deliveryId)))).toBe(202);
    await worker.invoke(2);
    expect(runs).toBe(2);
  }, 30_000);

  it('dead-letters a failed job rather than hide its retry once the queue holds maxInFlight messages in flight', async () => {
    const { web, worker, receiver, queue, queues } = await deployment({ fifo: true, attempts: 3, queue: { maxInFlight: 3 } });
    // Three messages of another producer, received and not deleted: in flight.
    for (const id of ['a', 'b', 'c']) {
      await queues.client.send(
        new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: '{}', MessageGroupId: id, MessageDeduplicationId: id }),
      );
    }
    await queues.client.send(new ReceiveMessageCommand({ QueueUrl: queues.queueUrl, MaxNumberOfMessages: 3, VisibilityTimeout: 600 }));
    receiver.on('message.delivered', () => {
      throw new Error('downstream down');
    });
    const deliveryId = newId();
    await web(functionUrlEvent(deliveryId));
    await worker.invoke();
    const [letter] = await queue.deadLetters();
    expect(letter).toMatchObject({ deliveryId, attempts: 1 });
    expect(letter?.lastError).toMatch(/^Error: downstream down \(dead-lettered rather than retried: the queue is at its maxInFlight/);
  }, 30_000);
});

describe('a queue that cannot consume', () => {
  it('refuses to consume without a store, saying why', () => {
    // A client that answers nothing: the queue's size check says so through onError, which this test keeps.
    const reported: Error[] = [];
    const queue = sqsQueue({
      client: { send: async () => ({}) },
      queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/q',
      onError: (error) => void reported.push(error),
    });
    const receiver = createReceiver({ secret: 'whsec_x', store: memoryStore(), queue });
    expect(() => receiver.work()).toThrow(/has no store, and consuming needs one/);
  });
});
