// What Lambda's SQS event source mapping does for one batch, with `ReportBatchItemFailures` on:
// receive messages until the batch is full (`batchSize`, 10 by default, more than a function's
// `concurrency` usually runs at once) or its batching window has passed (`MaximumBatchingWindowInSeconds`:
// the records received first wait that long before the invocation), hand the function the event as
// Lambda builds it (the record format of the Lambda developer guide's SQS example event: string
// attributes, lower-camel-case message attributes with their list fields, md5OfBody, the queue's ARN),
// then delete every record the function did not list in `batchItemFailures`. A listed record is left
// alone: it comes back after its visibility timeout. A function that throws, or does not return
// within its time (`remainingMs`: Lambda's timeout), leaves the whole batch: nothing is deleted,
// whatever the function did meanwhile (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
// A timed-out function's code is not stopped here (Lambda would freeze it): it runs on, as a frozen
// execution environment thawed by a later invocation would.
import { DeleteMessageCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SqsBatchResponse, SqsEvent, SqsRecord } from '@hookline/sqs';

type Handler = (event: SqsEvent, context?: { getRemainingTimeInMillis(): number }) => Promise<SqsBatchResponse>;

export interface Invocation {
  records: SqsRecord[];
  response: SqsBatchResponse | undefined;
  /** How the invocation ended: returned, threw, ran past its time or was killed (the batch then all comes back). */
  ended: 'returned' | 'threw' | 'timed out' | 'killed' | 'no records';
  /** The time the function had left when it returned, if it was given one. */
  leftMs?: number;
}

export interface InvokeOptions {
  /** The long poll of each receive, in seconds. @default 1 */
  waitSeconds?: number;
  /** The function's time (Lambda's timeout): past it the invocation has failed. */
  remainingMs?: number;
  /** How long the mapping gathers records before it invokes with a batch that is not full. @default 0 */
  batchingWindowMs?: number;
  /** The runtime dies this long into the invocation (out of memory, a crash), whatever the function's time. */
  killAfterMs?: number;
  /** The function throws once the handler returned (a bug of the function's own, after the batch was settled). */
  throwAfterHandler?: boolean;
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A mapping from `queueUrl` to `handler`. */
export function eventSourceMapping(client: SQSClient, queueUrl: string, handler: Handler, options: { batchSize?: number } = {}) {
  const batchSize = options.batchSize ?? 10;
  let arn: string | undefined;
  const queueArn = async () => {
    arn ??= (await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes
      ?.QueueArn as string;
    return arn;
  };

  async function gather(waitSeconds: number, windowMs: number): Promise<Message[]> {
    const batch: Message[] = [];
    const closesAt = Date.now() + windowMs;
    do {
      const { Messages } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, batchSize - batch.length),
          WaitTimeSeconds: batch.length === 0 ? waitSeconds : 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      batch.push(...(Messages ?? []));
      if (batch.length === 0 && windowMs === 0) break;
      if (batch.length < batchSize && Date.now() < closesAt) await sleep(Math.min(100, Math.max(0, closesAt - Date.now())));
    } while (batch.length < batchSize && Date.now() < closesAt);
    return batch;
  }

  return {
    /** One batch (gathered over the batching window) and, when there are records, one invocation. */
    async invoke(wait: number | InvokeOptions = {}, remaining?: number): Promise<Invocation> {
      const given: InvokeOptions =
        typeof wait === 'number' ? { waitSeconds: wait, ...(remaining === undefined ? {} : { remainingMs: remaining }) } : wait;
      const messages = await gather(given.waitSeconds ?? 1, given.batchingWindowMs ?? 0);
      if (messages.length === 0) return { records: [], response: undefined, ended: 'no records' };
      const fullArn = await queueArn();
      const records = messages.map((message) => record(message, fullArn));
      const deadline = given.remainingMs === undefined ? undefined : Date.now() + given.remainingMs;
      const running = handler(
        { Records: records },
        deadline === undefined ? undefined : { getRemainingTimeInMillis: () => deadline - Date.now() },
      ).then((response) => {
        if (given.throwAfterHandler) throw new Error('the function failed after its handler returned');
        return response;
      });
      const timers: ReturnType<typeof setTimeout>[] = [];
      const endAfter = <E extends 'timed out' | 'killed'>(ended: E, ms: number) =>
        new Promise<{ ended: E; response: undefined }>((resolve) => {
          timers.push(setTimeout(() => resolve({ ended, response: undefined }), Math.max(0, ms)));
        });
      const outcome = await Promise.race([
        running.then(
          (response) => ({ ended: 'returned' as const, response }),
          () => ({ ended: 'threw' as const, response: undefined }),
        ),
        ...(deadline === undefined ? [] : [endAfter('timed out', deadline - Date.now())]),
        ...(given.killAfterMs === undefined ? [] : [endAfter('killed', given.killAfterMs)]),
      ]);
      for (const timer of timers) clearTimeout(timer);
      const leftMs = deadline === undefined ? undefined : deadline - Date.now();
      if (outcome.ended !== 'returned') return { records, response: undefined, ended: outcome.ended };
      const failed = new Set(outcome.response.batchItemFailures.map((failure) => failure.itemIdentifier));
      for (const one of records) {
        if (!failed.has(one.messageId))
          await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: one.receiptHandle }));
      }
      return { records, response: outcome.response, ended: 'returned', ...(leftMs === undefined ? {} : { leftMs }) };
    },
  };
}
