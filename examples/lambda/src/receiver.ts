// The receiver the function serves: DynamoDB de-duplication when TABLE_NAME is set (as deployed), the
// memory store otherwise (a local run). One JSON line per handler run, like every example.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createReceiver, memoryStore } from '@hookline/core';
import { dynamoDbStore } from '@hookline/dynamodb';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');

const tableName = process.env.TABLE_NAME;
// Made once per execution environment, outside the handler, and reused by every invocation it serves.
export const receiver = createReceiver({
  secret,
  store: tableName ? dynamoDbStore({ client: new DynamoDBClient({}), table: tableName }) : memoryStore(),
});

receiver.on('*', async (delivery) => {
  console.log(JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId }));
});
