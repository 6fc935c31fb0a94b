// The receiver both functions share: the web function enqueues with it, the worker function runs its
// handlers. DynamoDB for de-duplication and the queue's job records when TABLE_NAME is set (as
// deployed), the memory store otherwise (a local run against a real queue, where both functions live
// in one process).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createReceiver, memoryStore } from '@hookline/core';
import { dynamoDbStore } from '@hookline/dynamodb';
import { sqsQueue } from '@hookline/sqs';
import { addHandlers, MAX_RUN_MS } from './handlers';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
const queueUrl = process.env.QUEUE_URL;
if (!queueUrl) throw new Error('Set QUEUE_URL to the URL of the SQS queue between the two functions.');

const tableName = process.env.TABLE_NAME;
// Made once per execution environment, outside the handlers, and reused by every invocation.
const store = tableName ? dynamoDbStore({ client: new DynamoDBClient({}), table: tableName }) : memoryStore();
const queue = sqsQueue({ client: new SQSClient({}), queueUrl, store });

export const receiver = createReceiver({ secret, store, queue, maxRunMs: MAX_RUN_MS });
addHandlers(receiver);
