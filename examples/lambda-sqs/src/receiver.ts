// The receiver both functions share: the web function enqueues with it, the worker function runs its
// handlers. DynamoDB for de-duplication and the queue's job records when TABLE_NAME is set (as
// deployed), the memory store otherwise (a local run, where both functions live in one process).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createReceiver, memoryStore } from '@hookline/core';
import { dynamoDbStore } from '@hookline/dynamodb';
import { sqsQueue } from '@hookline/sqs';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
const queueUrl = process.env.QUEUE_URL;
if (!queueUrl) throw new Error('Set QUEUE_URL to the URL of the SQS queue between the two functions.');

const tableName = process.env.TABLE_NAME;
// Made once per execution environment, outside the handlers, and reused by every invocation.
const store = tableName ? dynamoDbStore({ client: new DynamoDBClient({}), table: tableName }) : memoryStore();
const queue = sqsQueue({ client: new SQSClient({}), queueUrl, store });

export const receiver = createReceiver({
  secret,
  store,
  queue,
  // Below the worker function's timeout (60 s in the README), with room for the hand-back.
  maxRunMs: 45_000,
});

// A slow handler: what answer-fast mode is for. HANDLER_MS stands in for the real work.
const handlerMs = Number(process.env.HANDLER_MS ?? 0);
receiver.on('*', async (delivery) => {
  if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
  console.log(JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId }));
});
