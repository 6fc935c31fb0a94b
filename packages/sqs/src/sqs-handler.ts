import { type QueuedDelivery, type QueueJob, queueJobEntry } from '@hookline/core/adapter';
import { consume, type Outcome } from './consume';
import { invocationTime, RECEIVED_BEFORE_INVOCATION_MS, thawWatch } from './invocation-time';
import { type ReceivedMessage, readAttribute } from './message';
import { SQS_INTERNALS } from './sqs-queue';

/**
 * One record of an SQS event, as Lambda's event source mapping delivers it (the `SQSRecord` of
 * `@types/aws-lambda`, as far as the handler reads it).
 */
export interface SqsRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount?: string; SentTimestamp?: string };
  messageAttributes: Record<string, { stringValue?: string | undefined; dataType?: string } | undefined>;
  /** `arn:aws:sqs:<region>:<account>:<queue name>` */
  eventSourceARN: string;
  eventSource?: string;
}

/** The event a Lambda function behind an SQS event source mapping receives. */
export interface SqsEvent {
  Records: SqsRecord[];
}

/** The partial batch response: the records to leave in the queue (the mapping deletes the others). */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** The part of Lambda's context the handler reads. */
interface LambdaContextLike {
  getRemainingTimeInMillis?: () => number;
}

/** A Lambda handler for an SQS event source mapping: `export const handler = sqsHandler(receiver)`. */
export type SqsLambdaHandler = (event: SqsEvent, context?: LambdaContextLike) => Promise<SqsBatchResponse>;

/** Options of `sqsHandler()`. */
export interface SqsHandlerOptions {
  /**
   * Records of one batch run at once.
   * @default 10
   */
  concurrency?: number;
  /**
   * Time kept back at the end of the invocation: once the function has less than this left, the
   * records still running are handed back (each runs again after the receiver's `leaseMs`, no try
   * spent), no record starts any more (those not started are handed back too, to run at once
   * elsewhere), and the handler returns before Lambda's timeout would fail the whole batch.
   * @default 3_000
   */
  handBackMarginMs?: number;
}

/** A record as the consumer reads a received message; SQS received it at most an hour before `invokedAt`. */
function fromRecord(record: SqsRecord, invokedAt: number): ReceivedMessage {
  const attributes = new Map<string, string>();
  for (const [name, value] of Object.entries(record.messageAttributes ?? {}))
    if (value?.stringValue !== undefined) attributes.set(name, readAttribute(value.dataType, value.stringValue));
  return {
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    body: record.body,
    receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? '1') || 1,
    sentAt: Number(record.attributes?.SentTimestamp ?? invokedAt) || invokedAt,
    receivedAt: invokedAt - RECEIVED_BEFORE_INVOCATION_MS,
    attributes,
  };
}

function deliveryIdOf(job: QueueJob): string {
  return String((job.payload as Partial<QueuedDelivery> | undefined)?.delivery?.deliveryId ?? 'a job');
}

/**
 * A Lambda handler for an SQS event source mapping, the consumer side of answer-fast mode on AWS:
 * each record runs through the receiver's per-job processing (as `receiver.work()` would: shape
 * check, claim, handlers, settle), and the handler answers with a partial batch response. A record
 * that succeeded, failed (retried as a delayed copy carrying its tries), waited or was dead-lettered
 * is settled by the handler and left for the mapping to delete; only a record the handler could not
 * settle (SQS unreachable) or that is not due yet is listed in `batchItemFailures`, and comes back
 * after its visibility timeout. The queue needs a `store` (`sqsQueue({ client, queueUrl, store })`).
 *
 * The event source mapping must have `FunctionResponseTypes: ["ReportBatchItemFailures"]`: without
 * it Lambda ignores the answer and deletes the whole batch, the listed records with it.
 *
 * @example
 * const queue = sqsQueue({ client: new SQSClient({}), queueUrl: process.env.QUEUE_URL!, store });
 * const receiver = createReceiver({ secret, store, queue });
 * receiver.on('message.delivered', async ({ data }) => { ... });
 * export const handler = sqsHandler(receiver);
 */
export function sqsHandler(receiver: object, options: SqsHandlerOptions = {}): SqsLambdaHandler {
  const entry = queueJobEntry(receiver);
  if (entry === undefined) throw new TypeError('sqsHandler: pass the receiver createReceiver() returned');
  const internals = entry.queue === undefined ? undefined : SQS_INTERNALS.get(entry.queue);
  if (internals === undefined) {
    throw new TypeError(
      'sqsHandler: the receiver needs an SQS queue: createReceiver({ secret, store, queue: sqsQueue({ client, queueUrl, store }) })',
    );
  }
  const concurrency = options.concurrency ?? 10;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(`sqsHandler: concurrency must be an integer ≥ 1, got ${concurrency}`);
  const marginMs = options.handBackMarginMs ?? 3_000;
  const context = internals.consumer();
  const { queueName } = internals;
  const thaw = thawWatch(entry.leaseMs, context.onError);

  return async (event, lambdaContext) => {
    thaw.check();
    const invokedAt = Date.now();
    const records = event?.Records ?? [];
    const time = invocationTime(
      lambdaContext?.getRemainingTimeInMillis?.(),
      marginMs,
      entry.leaseMs,
      (job) => entry.process(job),
      (work, job, fence) => thaw.track(work, deliveryIdOf(job), fence),
    );

    const failures: { itemIdentifier: string }[] = [];
    async function one(record: SqsRecord): Promise<void> {
      let outcome: Outcome;
      if (queueNameOf(record.eventSourceARN) !== queueName) {
        context.onError(
          new Error(
            `sqsHandler: a record from ${record.eventSourceARN} reached the handler of queue ${queueName}: map this function to the queue its sqsQueue() names`,
          ),
        );
        outcome = 'keep';
      } else {
        outcome = await consume(context, fromRecord(record, invokedAt), time.process);
      }
      if (outcome === 'keep') failures.push({ itemIdentifier: record.messageId });
    }

    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(concurrency, records.length) }, async () => {
          while (next < records.length && !time.over()) await one(records[next++] as SqsRecord);
        }),
      );
      // Past the hand-back no record starts: those left are handed back all at once, none run.
      await Promise.all(records.slice(next).map(one));
    } finally {
      time.end();
    }
    return { batchItemFailures: failures };
  };
}

function queueNameOf(arn: string | undefined): string | undefined {
  return typeof arn === 'string' ? arn.split(':').pop() : undefined;
}
