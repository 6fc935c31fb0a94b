// What Lambda's event source mapping does for the worker function, for a local run against a real
// queue: batches of up to 10 from long polls, ReportBatchItemFailures (the records the worker did not
// list are deleted).
import { DeleteMessageCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { handler as workerHandler } from './worker';

export interface MappingOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** The queue's ARN, as each record carries it. */
  arn: string;
  worker: typeof workerHandler;
  /** Aborted: the loop ends (the long poll in flight is cut short). */
  signal: AbortSignal;
}

/** The records Lambda would hand the worker for these messages. */
function toRecords(messages: Message[], arn: string): SQSRecord[] {
  return messages.map((message) => ({
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
}

/** Polls until `signal` aborts. */
export async function pollLikeEventSourceMapping({ sqs, queueUrl, arn, worker, signal }: MappingOptions): Promise<void> {
  while (!signal.aborted) {
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
        { abortSignal: signal },
      ));
    } catch (error) {
      if (signal.aborted) return;
      console.error(`example-lambda-sqs: receiving failed: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    if (messages === undefined || messages.length === 0) continue;
    const records = toRecords(messages, arn);
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
