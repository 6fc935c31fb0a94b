// What Lambda's SQS event source mapping does for one batch, with `ReportBatchItemFailures` on:
// receive up to `batchSize` messages, hand the function the event as Lambda builds it (the record
// format of the Lambda developer guide's SQS example event: string attributes, lower-camel-case
// message attributes with their list fields, md5OfBody, the queue's ARN), then delete every record
// the function did not list in `batchItemFailures`. A listed record is left alone: it comes back after
// its visibility timeout. A function that throws or times out leaves the whole batch.
import { DeleteMessageCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SqsBatchResponse, SqsEvent, SqsRecord } from '@hookline/sqs';

type Handler = (event: SqsEvent, context?: { getRemainingTimeInMillis(): number }) => Promise<SqsBatchResponse>;

export interface Invocation {
  records: SqsRecord[];
  response: SqsBatchResponse | undefined;
}

export function record(message: Message, queueArn: string): SqsRecord & Record<string, unknown> {
  const messageAttributes: Record<
    string,
    { stringValue?: string; binaryValue?: string; stringListValues: string[]; binaryListValues: string[]; dataType: string }
  > = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      ...(value.BinaryValue === undefined ? {} : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
      stringListValues: [],
      binaryListValues: [],
      dataType: value.DataType as string,
    };
  }
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle as string,
    body: message.Body as string,
    attributes: { ...(message.Attributes as Record<string, string>) },
    messageAttributes,
    md5OfBody: message.MD5OfBody as string,
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(':')[3] as string,
  };
}

/** A mapping from `queueUrl` to `handler`. */
export function eventSourceMapping(client: SQSClient, queueUrl: string, handler: Handler, options: { batchSize?: number } = {}) {
  let arn: string | undefined;
  const queueArn = async () => {
    arn ??= (await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes
      ?.QueueArn as string;
    return arn;
  };
  return {
    /** One poll (a long poll of `waitSeconds`) and, when it brought messages, one invocation. */
    async invoke(waitSeconds = 1, remainingMs?: number): Promise<Invocation> {
      const { Messages } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: options.batchSize ?? 10,
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      if (Messages === undefined || Messages.length === 0) return { records: [], response: undefined };
      const records = Messages.map((message) => record(message, arn ?? ''));
      const fullArn = await queueArn();
      for (const one of records) one.eventSourceARN = fullArn;
      const deadline = remainingMs === undefined ? undefined : Date.now() + remainingMs;
      const response = await handler(
        { Records: records },
        deadline === undefined ? undefined : { getRemainingTimeInMillis: () => deadline - Date.now() },
      );
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      for (const one of records) {
        if (!failed.has(one.messageId))
          await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: one.receiptHandle }));
      }
      return { records, response };
    },
  };
}
