// The SQS test server against what the SQS API reference and developer guide document, through the
// AWS SDK's own client (the JSON protocol it speaks today). What it does not model is listed in its
// README.md.
import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { md5Hex } from './md5';
import { type RunningSqsServer, startSqsServer } from './start';

let server: RunningSqsServer;
let sqs: SQSClient;
const prefix = `t${randomUUID().slice(0, 8)}`;
let count = 0;

beforeAll(async () => {
  server = await startSqsServer();
  sqs = new SQSClient({ ...server.clientConfig, maxAttempts: 1 });
});
afterAll(async () => {
  sqs?.destroy();
  await server?.stop();
});

async function queue(attributes: Record<string, string> = {}, fifo = false): Promise<string> {
  count += 1;
  const name = `${prefix}-${count}${fifo ? '.fifo' : ''}`;
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: fifo ? { FifoQueue: 'true', ...attributes } : attributes }),
  );
  return QueueUrl as string;
}

async function receive(QueueUrl: string, more: Partial<ConstructorParameters<typeof ReceiveMessageCommand>[0]> = {}) {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl,
      MaxNumberOfMessages: 10,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
      ...more,
    }),
  );
  return Messages ?? [];
}

async function attributes(QueueUrl: string): Promise<Record<string, string>> {
  return (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }))).Attributes ?? {};
}

/** The error a call rejects with: its name (the SDK's error class) and `Code` from x-amzn-query-error. */
async function failure(promise: Promise<unknown>): Promise<{ name: string; code: string | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { name, message, Code } = error as Error & { Code?: string };
    return { name, code: Code, message };
  }
  throw new Error('expected the call to fail');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('queues', () => {
  it('creates a queue with the documented defaults; creating it again with the same attributes gives its URL', async () => {
    const url = await queue();
    expect(await attributes(url)).toMatchObject({
      VisibilityTimeout: '30',
      MessageRetentionPeriod: '345600',
      DelaySeconds: '0',
      ReceiveMessageWaitTimeSeconds: '0',
      // 1 MiB since August 2025 (256 KiB before), the CreateQueue API reference's default.
      MaximumMessageSize: '1048576',
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      ApproximateNumberOfMessagesDelayed: '0',
    });
    const name = url.split('/').pop() as string;
    expect((await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl).toBe(url);
    expect((await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toBe(url);
    expect(await failure(sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '5' } })))).toMatchObject({
      name: 'QueueNameExists',
      code: 'QueueAlreadyExists',
    });
  });

  it('answers an unknown queue with QueueDoesNotExist in SQS JSON error shape and the query error header', async () => {
    expect(await failure(sqs.send(new GetQueueUrlCommand({ QueueName: `${prefix}-none` })))).toMatchObject({
      name: 'QueueDoesNotExist',
      code: 'AWS.SimpleQueueService.NonExistentQueue',
    });
    const response = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'x-amz-target': 'AmazonSQS.GetQueueUrl', 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify({ QueueName: `${prefix}-none` }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-amzn-query-error')).toBe('AWS.SimpleQueueService.NonExistentQueue;Sender');
    expect(await response.json()).toEqual({
      __type: 'com.amazonaws.sqs#QueueDoesNotExist',
      message: 'The specified queue does not exist.',
    });
  });

  it('refuses attribute values out of their documented ranges and unknown attributes', async () => {
    for (const [name, value] of [
      ['VisibilityTimeout', '43201'],
      ['MessageRetentionPeriod', '59'],
      ['DelaySeconds', '901'],
      ['ReceiveMessageWaitTimeSeconds', '21'],
    ]) {
      expect((await failure(queue({ [name as string]: value as string }))).name).toBe('InvalidAttributeValue');
    }
    expect((await failure(queue({ Colour: 'blue' }))).name).toBe('InvalidAttributeName');
    expect(
      (
        await failure(
          queue({ RedrivePolicy: JSON.stringify({ deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:none', maxReceiveCount: 3 }) }),
        )
      ).name,
    ).toBe('InvalidAttributeValue');
  });

  it('purges a queue once per 60 seconds, and blocks a deleted queue name for 60 seconds', async () => {
    const url = await queue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }));
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    expect(await receive(url)).toEqual([]);
    expect(await failure(sqs.send(new PurgeQueueCommand({ QueueUrl: url })))).toMatchObject({
      name: 'PurgeQueueInProgress',
      code: 'AWS.SimpleQueueService.PurgeQueueInProgress',
    });
    const name = url.split('/').pop() as string;
    await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    expect((await failure(sqs.send(new CreateQueueCommand({ QueueName: name })))).name).toBe('QueueDeletedRecently');
    await server.advanceClock(61_000);
    expect((await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl).toBe(url);
  });
});

describe('messages', () => {
  it('answers the MD5 of the body and of the attributes as SQS computes them', async () => {
    const url = await queue();
    const body = 'Grüße, 世界 🌍';
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: body,
        MessageAttributes: { attribName1: { DataType: 'String', StringValue: 'attribValue 1' } },
      }),
    );
    expect(sent.MD5OfMessageBody).toBe(md5Hex(Buffer.from(body, 'utf8')));
    // The digest published for this attribute alongside the developer guide's algorithm.
    expect(sent.MD5OfMessageAttributes).toBe('19e27d4e946b072f3f58da80d94fd778');
    const several = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: body,
        MessageAttributes: {
          attribName1: { DataType: 'String', StringValue: 'attribValue 1' },
          customNumberTypeAttrib: { DataType: 'Number.float', StringValue: '4563442423554324324264524243.32543234' },
          binaryAttribute: { DataType: 'Binary', BinaryValue: Buffer.from('Hello binary world!') },
        },
      }),
    );
    expect(several.MD5OfMessageAttributes).toBe('c932db14a896c663f83c260297d594ff');
    const [first, second] = await receive(url);
    expect(first).toMatchObject({ Body: body, MD5OfBody: sent.MD5OfMessageBody, MD5OfMessageAttributes: sent.MD5OfMessageAttributes });
    expect(second?.MessageAttributes?.binaryAttribute?.BinaryValue).toEqual(new Uint8Array(Buffer.from('Hello binary world!')));
    expect(second?.MD5OfMessageAttributes).toBe('c932db14a896c663f83c260297d594ff');
  });

  it('counts the body and every attribute’s name, type and value against MaximumMessageSize, alone and in a batch', async () => {
    const url = await queue({ MaximumMessageSize: '1024' });
    const attribute = { 'hookline-tries': { DataType: 'Number', StringValue: '0' } }; // 14 + 6 + 1 bytes
    const fits = 'é'.repeat(501); // 1,002 bytes + 21 = 1,023
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: fits, MessageAttributes: attribute }));
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `${fits}a`, MessageAttributes: attribute })); // 1,024
    expect(
      await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `${fits}ab`, MessageAttributes: attribute }))),
    ).toMatchObject({ name: 'InvalidParameterValue', message: expect.stringMatching(/shorter than 1024 bytes/) });
    const half = { MessageBody: 'x'.repeat(500), MessageAttributes: attribute }; // 521 bytes each
    expect(
      (
        await failure(
          sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: url,
              Entries: [
                { Id: 'a', ...half },
                { Id: 'b', ...half },
              ],
            }),
          ),
        )
      ).name,
    ).toBe('BatchRequestTooLong');
  });

  it('refuses characters outside the allowed set, more than 10 attributes, and an empty attribute value', async () => {
    const url = await queue();
    expect((await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'a\u0001b' })))).name).toBe(
      'InvalidMessageContents',
    );
    expect((await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'id wdl_\ufffe' })))).name).toBe(
      'InvalidMessageContents',
    );
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: 'v' }]));
    expect((await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', MessageAttributes: eleven })))).name).toBe(
      'InvalidParameterValue',
    );
    expect(
      (
        await failure(
          sqs.send(
            new SendMessageCommand({
              QueueUrl: url,
              MessageBody: 'x',
              MessageAttributes: { a: { DataType: 'Number', StringValue: 'one' } },
            }),
          ),
        )
      ).name,
    ).toBe('InvalidParameterValue');
  });

  it('hides a received message for its visibility timeout and counts its receives; only the latest receipt handle deletes it', async () => {
    const url = await queue({ VisibilityTimeout: '1' });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'hello' }));
    const [first] = await receive(url);
    expect(first?.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(await receive(url)).toEqual([]);
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '1' });
    await sleep(1_100);
    const [second] = await receive(url);
    expect(second?.MessageId).toBe(first?.MessageId);
    expect(second?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(second?.ReceiptHandle).not.toBe(first?.ReceiptHandle);
    // The first receive's handle: the call succeeds, the message stays.
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first?.ReceiptHandle }));
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessagesNotVisible: '1' });
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: second?.ReceiptHandle }));
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
    expect((await failure(sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: 'not-a-handle' })))).name).toBe(
      'ReceiptHandleIsInvalid',
    );
  });

  it('delays a message by DelaySeconds, counting it as delayed meanwhile', async () => {
    const url = await queue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later', DelaySeconds: 1 }));
    expect(await receive(url)).toEqual([]);
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessagesDelayed: '1' });
    await sleep(1_100);
    expect((await receive(url)).map((message) => message.Body)).toEqual(['later']);
    expect((await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 901 })))).name).toBe(
      'InvalidParameterValue',
    );
  });

  it('long-polls: answers when a message arrives during the wait, and empty once the wait is over', async () => {
    const url = await queue();
    const waiting = receive(url, { WaitTimeSeconds: 5 });
    await sleep(300);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'arrived' }));
    expect((await waiting).map((message) => message.Body)).toEqual(['arrived']);
    const started = Date.now();
    expect(await receive(url, { WaitTimeSeconds: 1 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await failure(receive(url, { WaitTimeSeconds: 21 }))).name).toBe('InvalidParameterValue');
    expect((await failure(receive(url, { MaxNumberOfMessages: 11 }))).name).toBe('InvalidParameterValue');
  });

  it('changes a message’s visibility while in flight, up to 12 hours from its receive', async () => {
    const url = await queue({ VisibilityTimeout: '43200' });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'm' }));
    const [message] = await receive(url);
    expect(
      (
        await failure(
          sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: message?.ReceiptHandle, VisibilityTimeout: 43_201 })),
        )
      ).name,
    ).toBe('InvalidParameterValue');
    await server.advanceClock(3_600_000);
    expect(
      (
        await failure(
          sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: message?.ReceiptHandle, VisibilityTimeout: 43_200 })),
        )
      ).name,
    ).toBe('InvalidParameterValue');
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: message?.ReceiptHandle, VisibilityTimeout: 0 }));
    const [again] = await receive(url);
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: again?.ReceiptHandle, VisibilityTimeout: 0 }));
    expect(
      await failure(
        sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: again?.ReceiptHandle, VisibilityTimeout: 10 })),
      ),
    ).toMatchObject({ name: 'MessageNotInflight', code: 'AWS.SimpleQueueService.MessageNotInflight' });
  });

  it('drops a message once the retention period has passed', async () => {
    const url = await queue({ MessageRetentionPeriod: '60' });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'short-lived' }));
    await server.advanceClock(61_000);
    expect(await receive(url)).toEqual([]);
  });

  it('moves a message to the dead-letter queue on the receive after maxReceiveCount, with its body, attributes and source', async () => {
    const dlq = await queue();
    const { QueueArn } = await attributes(dlq);
    const url = await queue({ RedrivePolicy: JSON.stringify({ deadLetterTargetArn: QueueArn, maxReceiveCount: 2 }) });
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: 'poison',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'test' } },
      }),
    );
    for (let i = 0; i < 2; i++) expect(await receive(url, { VisibilityTimeout: 0 })).toHaveLength(1);
    expect(await receive(url)).toEqual([]);
    const [moved] = await receive(dlq);
    expect(moved).toMatchObject({
      MessageId: sent.MessageId,
      Body: 'poison',
      MessageAttributes: { kind: { DataType: 'String', StringValue: 'test' } },
    });
    expect(moved?.Attributes?.DeadLetterQueueSourceArn).toBe((await attributes(url)).QueueArn);
    expect(moved?.Attributes?.ApproximateReceiveCount).toBe('3');
  });

  it('answers batches per entry, and refuses an empty, oversized or ambiguous batch as a whole', async () => {
    const url = await queue();
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'good', MessageBody: 'ok' },
          { Id: 'bad', MessageBody: 'not\u0000ok' },
        ],
      }),
    );
    expect(sent.Successful?.map((entry) => entry.Id)).toEqual(['good']);
    expect(sent.Failed).toEqual([expect.objectContaining({ Id: 'bad', SenderFault: true })]);
    expect((await failure(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [] })))).name).toBe('EmptyBatchRequest');
    const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `m${i}`, MessageBody: 'x' }));
    expect((await failure(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: eleven })))).name).toBe(
      'TooManyEntriesInBatchRequest',
    );
    const twice = [
      { Id: 'same', MessageBody: 'x' },
      { Id: 'same', MessageBody: 'y' },
    ];
    expect((await failure(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: twice })))).name).toBe('BatchEntryIdsNotDistinct');
    const [message] = await receive(url);
    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', ReceiptHandle: message?.ReceiptHandle },
          { Id: 'b', ReceiptHandle: 'garbage' },
        ],
      }),
    );
    expect(deleted.Successful).toEqual([{ Id: 'a' }]);
    expect(deleted.Failed).toEqual([expect.objectContaining({ Id: 'b', Code: 'ReceiptHandleIsInvalid' })]);
  });
});

describe('FIFO queues', () => {
  it('needs a message group, takes no per-message delay, and drops a repeated deduplication id for 5 minutes', async () => {
    const url = await queue({}, true);
    expect((await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', MessageDeduplicationId: 'd' })))).name).toBe(
      'MissingParameter',
    );
    expect(
      (
        await failure(
          sqs.send(
            new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'd', DelaySeconds: 1 }),
          ),
        )
      ).name,
    ).toBe('InvalidParameterValue');
    expect((await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', MessageGroupId: 'g' })))).name).toBe(
      'InvalidParameterValue',
    );
    const first = await sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: 'one', MessageGroupId: 'g', MessageDeduplicationId: 'd' }),
    );
    const again = await sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: 'two', MessageGroupId: 'g', MessageDeduplicationId: 'd' }),
    );
    expect(again.MessageId).toBe(first.MessageId);
    expect(first.SequenceNumber).toMatch(/^\d{20,}$/);
    const [only] = await receive(url);
    expect(only?.Body).toBe('one');
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: only?.ReceiptHandle }));
    await server.advanceClock(5 * 60_000 + 1_000);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'three', MessageGroupId: 'g', MessageDeduplicationId: 'd' }));
    expect((await receive(url)).map((message) => message.Body)).toEqual(['three']);
  });

  it('deduplicates on the body with ContentBasedDeduplication', async () => {
    const url = await queue({ ContentBasedDeduplication: 'true' }, true);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'same', MessageGroupId: 'g' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'same', MessageGroupId: 'g' }));
    expect(await receive(url)).toHaveLength(1);
  });

  it('hands out a group’s messages in order, none while one of the group is in flight', async () => {
    const url = await queue({}, true);
    for (const [body, group] of [
      ['a1', 'a'],
      ['b1', 'b'],
      ['a2', 'a'],
    ]) {
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: body }));
    }
    const first = await receive(url, { MaxNumberOfMessages: 1 });
    expect(first.map((message) => message.Body)).toEqual(['a1']);
    expect((await receive(url)).map((message) => message.Body)).toEqual(['b1']);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first[0]?.ReceiptHandle }));
    expect((await receive(url)).map((message) => message.Body)).toEqual(['a2']);
  });
});

describe('started with SQS’s distributed behaviour made frequent: duplicates, low in-flight quotas, characters replaced', () => {
  let strict: RunningSqsServer;
  let client: SQSClient;
  beforeAll(async () => {
    strict = await startSqsServer({ duplicateRate: 1, seed: 7, inFlightLimit: { standard: 2, fifo: 2 }, invalidCharacters: 'replace' });
    client = new SQSClient({ ...strict.clientConfig, maxAttempts: 1 });
  });
  afterAll(async () => {
    client?.destroy();
    await strict?.stop();
  });

  async function strictQueue(attributes: Record<string, string> = {}, fifo = false): Promise<string> {
    count += 1;
    const name = `${prefix}-strict-${count}${fifo ? '.fifo' : ''}`;
    const { QueueUrl } = await client.send(
      new CreateQueueCommand({ QueueName: name, Attributes: fifo ? { FifoQueue: 'true', ...attributes } : attributes }),
    );
    return QueueUrl as string;
  }
  const receiveFrom = async (QueueUrl: string, more: Partial<ConstructorParameters<typeof ReceiveMessageCommand>[0]> = {}) =>
    (await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], ...more })))
      .Messages ?? [];

  it('delivers a deleted message of a standard queue again once its visibility timeout is over, its receive count one higher', async () => {
    const url = await strictQueue({ VisibilityTimeout: '1' });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'twice' }));
    const [first] = await receiveFrom(url);
    await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first?.ReceiptHandle }));
    expect(await strict.duplicatesLeft(url.split('/').pop() as string)).toBe(1);
    expect(await receiveFrom(url)).toEqual([]);
    await sleep(1_100);
    const [again] = await receiveFrom(url);
    expect(again).toMatchObject({ MessageId: first?.MessageId, Body: 'twice' });
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
  });

  it('answers OverLimit to a short poll of a standard queue at its in-flight quota, and nothing to a long poll or a FIFO queue', async () => {
    const url = await strictQueue();
    for (const body of ['1', '2', '3']) await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
    expect(await receiveFrom(url)).toHaveLength(2);
    expect(await failure(receiveFrom(url))).toMatchObject({ name: 'OverLimit', code: 'OverLimit' });
    expect(await receiveFrom(url, { WaitTimeSeconds: 1 })).toEqual([]);
    const fifo = await strictQueue({}, true);
    for (const body of ['1', '2', '3']) {
      await client.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: body, MessageGroupId: body, MessageDeduplicationId: body }));
    }
    expect(await receiveFrom(fifo)).toHaveLength(2);
    expect(await receiveFrom(fifo)).toEqual([]);
  });

  it('replaces characters outside the allowed set in a body with U+FFFD, and still refuses them in an attribute', async () => {
    const url = await strictQueue();
    const sent = 'wdl_\ufffe and \u0001';
    const answer = await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: sent }));
    expect(answer.MD5OfMessageBody).toBe(md5Hex(Buffer.from(sent, 'utf8')));
    expect((await receiveFrom(url))[0]?.Body).toBe('wdl_\ufffd and \ufffd');
    expect((await failure(client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '\uffff' })))).name).toBe(
      'InvalidMessageContents',
    );
    expect(
      (
        await failure(
          client.send(
            new SendMessageCommand({
              QueueUrl: url,
              MessageBody: 'x',
              MessageAttributes: { id: { DataType: 'String', StringValue: 'wdl_\ufffe' } },
            }),
          ),
        )
      ).name,
    ).toBe('InvalidMessageContents');
  });
});
