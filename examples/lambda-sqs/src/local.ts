/**
 * Both functions on your machine: 127.0.0.1:PORT turns each request into a Function URL event for the
 * web function, and a loop plays the event source mapping for the worker function (it long-polls
 * QUEUE_URL, invokes the worker with the records as Lambda delivers them, and deletes the records the
 * worker did not list in batchItemFailures). Point QUEUE_URL at a queue in your account, or at an
 * SQS-compatible server with AWS_ENDPOINT_URL_SQS.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo QUEUE_URL=https://sqs.eu-west-1.amazonaws.com/…/hookline pnpm --filter example-lambda-sqs start
 */
import { DeleteMessageCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { serveFunctionUrl } from '@hookline/aws-lambda/local';
import type { SQSRecord } from 'aws-lambda';
import { handler as web } from './web';
import { handler as worker } from './worker';

const port = Number(process.env.PORT ?? 3000);
const queueUrl = process.env.QUEUE_URL as string;

const server = await serveFunctionUrl(web, { port });
console.error(`example-lambda-sqs: a Function URL stand-in on http://127.0.0.1:${port}/webhooks`);

// The event source mapping: batches of up to 10, long polls, ReportBatchItemFailures.
const sqs = new SQSClient({});
const polling = new AbortController();
async function mapping(): Promise<void> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const arn = Attributes?.QueueArn ?? '';
  while (!polling.signal.aborted) {
    let messages: Message[] | undefined;
    try {
      ({ Messages: messages } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 20,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
        { abortSignal: polling.signal },
      ));
    } catch (error) {
      if (polling.signal.aborted) return;
      console.error(`example-lambda-sqs: receiving failed: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    if (messages === undefined || messages.length === 0) continue;
    const records: SQSRecord[] = messages.map((message) => ({
      messageId: message.MessageId ?? '',
      receiptHandle: message.ReceiptHandle ?? '',
      body: message.Body ?? '',
      attributes: message.Attributes as unknown as SQSRecord['attributes'],
      messageAttributes: Object.fromEntries(
        Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
          name,
          { stringValue: value.StringValue, stringListValues: [], binaryListValues: [], dataType: value.DataType ?? 'String' },
        ]),
      ),
      md5OfBody: message.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: arn.split(':')[3] ?? '',
    }));
    // A 60 s function timeout, as the README deploys it.
    const deadline = Date.now() + 60_000;
    const { batchItemFailures } = await worker({ Records: records }, { getRemainingTimeInMillis: () => deadline - Date.now() });
    const left = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
    for (const record of records) {
      if (!left.has(record.messageId))
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: record.receiptHandle }));
    }
  }
}
const mapped = mapping();

process.once('SIGTERM', async () => {
  polling.abort();
  server.close();
  await mapped;
  process.exit(0);
});
