// Queues of their own for one test: a queue and its dead-letter queue on the SQS test server, with
// the redrive policy the README recommends, removed after the test.
import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { RunningSqsServer } from '../../support/sqs-server/start';

export interface TestQueues {
  client: SQSClient;
  queueUrl: string;
  deadLetterQueueUrl: string;
  /** Sends a message no worker can trust, naming `deliveryId` as hookline's messages do. */
  sendCorrupt(deliveryId: string): Promise<void>;
  remove(): Promise<void>;
}

/** A queue and its dead-letter queue; `maxReceiveCount` is the redrive policy's backstop. */
export async function testQueues(
  server: RunningSqsServer,
  options: { fifo?: boolean; maxReceiveCount?: number; visibilityTimeout?: number; maximumMessageSize?: number } = {},
): Promise<TestQueues> {
  const client = new SQSClient({ ...server.clientConfig, maxAttempts: 1 });
  const suffix = options.fifo ? '.fifo' : '';
  const base = `hookline-${randomUUID().slice(0, 12)}`;
  const fifo = options.fifo ? { FifoQueue: 'true' } : {};
  const size = options.maximumMessageSize === undefined ? {} : { MaximumMessageSize: String(options.maximumMessageSize) };
  const dead = await client.send(
    new CreateQueueCommand({ QueueName: `${base}-dlq${suffix}`, Attributes: { ...fifo, ...size, MessageRetentionPeriod: '1209600' } }),
  );
  const deadLetterQueueUrl = dead.QueueUrl as string;
  const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: deadLetterQueueUrl, AttributeNames: ['QueueArn'] }));
  const main = await client.send(
    new CreateQueueCommand({
      QueueName: `${base}${suffix}`,
      Attributes: {
        ...fifo,
        ...size,
        VisibilityTimeout: String(options.visibilityTimeout ?? 30),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: options.maxReceiveCount ?? 10 }),
      },
    }),
  );
  const queueUrl = main.QueueUrl as string;
  return {
    client,
    queueUrl,
    deadLetterQueueUrl,
    async sendCorrupt(deliveryId) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: '{"delivery": not json',
          MessageAttributes: { 'hookline-delivery-id': { DataType: 'String', StringValue: deliveryId } },
          ...(options.fifo ? { MessageGroupId: deliveryId, MessageDeduplicationId: deliveryId } : {}),
        }),
      );
    },
    async remove() {
      await client.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => {});
      await client.send(new DeleteQueueCommand({ QueueUrl: deadLetterQueueUrl })).catch(() => {});
      client.destroy();
    },
  };
}
