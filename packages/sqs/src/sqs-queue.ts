import { randomUUID } from 'node:crypto';
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  type DeadLetterRef,
  type DeliveryQueue,
  JobTooLargeError,
  type JobResult,
  type QueuedDelivery,
  queuedDeliveryJson,
  type QueueJob,
  type QueueWorker,
  refuse,
  scopedDeliveryId,
} from '@hookline/core/adapter';
import { type ConsumerContext, MAX_DELAY_MS } from './consume';
import { type DeadLetterAccess, listDeadLetters, replayLetters } from './dead-letters';
import {
  ATTRIBUTES,
  attributeBytes,
  fifoId,
  jobAttributes,
  numberAttribute,
  RESERVED_BYTES,
  type ReceivedMessage,
  type StringAttribute,
  sqsBody,
  stringAttribute,
} from './message';
import { poll } from './poller';
import { deadLetterQueueFinder, queueAttributes } from './queue-attributes';
import { resolveQueueOptions, type SqsQueueOptions } from './queue-options';
import { bounded } from './sqs-client';

export type { SqsQueueOptions } from './queue-options';

/**
 * Room `bodyLimitBytes()` keeps, beyond `RESERVED_BYTES`, for what a job adds to the delivery's body:
 * the job's JSON around it and the first message's attributes (a deliveryId of 256 characters and a
 * scope escaped, the token, the trace context).
 */
const ENVELOPE_BYTES = 8_192;

/** What `sqsQueue()` returns: the `DeliveryQueue`, plus its queue URLs. */
export interface SqsDeliveryQueue extends DeliveryQueue {
  readonly queueUrl: string;
  /** The dead-letter queue's URL (from the options, or read from the queue's redrive policy). */
  deadLetterQueueUrl(): Promise<string>;
}

/** What `sqsHandler()` needs of a queue made here. */
export interface SqsInternals {
  /** The consumer side; throws for a queue without a store, which cannot consume. */
  readonly consumer: () => ConsumerContext;
  readonly queueName: string;
  readonly onError: (error: Error) => void;
}

/** The internals of each queue made here, for `sqsHandler()`. */
export const SQS_INTERNALS = new WeakMap<DeliveryQueue, SqsInternals>();

/** Why a queue without a store cannot consume: the message from `work()` and `sqsHandler()`. */
export function noStoreToConsume(queueName: string): string {
  return `sqsQueue(${queueName}) has no store, and consuming needs one: it records which message carries each job, so that a message SQS hands out again (a Lambda invocation that was killed, a lapsed visibility timeout, SQS's at-least-once delivery) never forks its job. Pass the receiver's store: sqsQueue({ client, queueUrl, store }).`;
}

function errorOf(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** SQS's own refusal of a message over MaximumMessageSize, as the SDK reports it. */
function isSizeRefusal(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  return name === 'InvalidParameterValue' && /shorter than \d+ bytes/i.test(message ?? '');
}

/**
 * A `DeliveryQueue` on Amazon SQS for answer-fast mode: `createReceiver({ secret, store, queue })`,
 * consumed by a Lambda function (`sqsHandler(receiver)` behind an SQS event source mapping) or by
 * long-polling workers (`receiver.work()`). Each delivery is one message; a retry or a wait is a fresh
 * delayed copy that carries the tries spent (so waiting spends none, and the redrive policy only
 * counts consumers that stopped); a job that can never succeed, or that used its last try, is sent to
 * the dead-letter queue with why: those are the dead letters, listed and replayed from here.
 *
 * @example
 * const client = new SQSClient({});
 * const store = dynamoDbStore({ client: dynamo, table: 'hookline' });
 * const queue = sqsQueue({ client, queueUrl: process.env.QUEUE_URL!, store });
 * const receiver = createReceiver({ secret, store, queue });
 */
export function sqsQueue(options: SqsQueueOptions): SqsDeliveryQueue {
  const settings = resolveQueueOptions(options);
  const { client, queueUrl, queueName, fifo, timeoutMs, records, onError } = settings;

  const deadLetterQueueUrl = deadLetterQueueFinder({ client, queueUrl, queueName, timeoutMs, given: options.deadLetterQueueUrl });
  const attributes = queueAttributes({
    client,
    queueUrl,
    timeoutMs,
    deadLetterQueueUrl,
    maxMessageBytes: settings.maxMessageBytes,
    onError,
  });

  async function send(
    url: string,
    message: { body: string; attributes: Record<string, StringAttribute>; delayMs: number },
    fifoIds: { group: string; deduplication: string } | undefined,
    what: string,
  ): Promise<void> {
    try {
      await bounded(
        client,
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: message.body,
          MessageAttributes: message.attributes,
          ...(fifoIds === undefined
            ? { DelaySeconds: Math.min(Math.ceil(message.delayMs / 1000), MAX_DELAY_MS / 1000) }
            : { MessageGroupId: fifoIds.group, MessageDeduplicationId: fifoIds.deduplication }),
        }),
        timeoutMs,
        what,
      );
    } catch (error) {
      if (isSizeRefusal(error)) throw new JobTooLargeError(`sqs: ${what}: ${errorOf(error).message}`);
      throw error;
    }
  }

  // On a FIFO queue each delivery is a message group of its own: no delivery holds up another (the
  // order of one resource's deliveries is the ordering guards' job), and a copy waiting for its due
  // time blocks nothing else. The first message of a job is deduplicated on the delivery (and its
  // revival, or without a store its receipt); a next message on the message it follows, so that SQS
  // drops a second next message of one message within 5 minutes.
  const fifoIdsOf = (scopedId: string, deduplication: string) => (fifo ? { group: fifoId(scopedId), deduplication } : undefined);

  const context: ConsumerContext | undefined =
    records === undefined
      ? undefined
      : {
          fifo,
          attempts: settings.attempts,
          maxStalls: settings.maxStalls,
          retryDelayMs: settings.retryDelayMs,
          async send(target, message) {
            const url = target === 'queue' ? queueUrl : await deadLetterQueueUrl();
            await send(
              url,
              { ...message, delayMs: target === 'queue' ? message.delayMs : 0 },
              fifoIdsOf(message.groupOf, fifoId(`${message.after}\n${target}`)),
              target === 'queue' ? "sending a job's next message" : 'sending a dead letter',
            );
          },
          async changeVisibility(message, seconds) {
            await bounded(
              client,
              new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle, VisibilityTimeout: seconds }),
              timeoutMs,
              'hiding a message until it is due',
            );
          },
          crowded: async () => (await attributes.inFlight().catch(() => 0)) >= settings.maxInFlight,
          records,
          onError,
        };

  const access: DeadLetterAccess = {
    client,
    deadLetterQueueUrl,
    timeoutMs,
    records,
    async sendFresh(letter: ReceivedMessage, token: string | undefined) {
      const fresh: Record<string, StringAttribute> = { [ATTRIBUTES.tries]: numberAttribute(0) };
      for (const name of [ATTRIBUTES.deliveryId, ATTRIBUTES.scope, ATTRIBUTES.traceparent, ATTRIBUTES.tracestate]) {
        const value = letter.attributes.get(name);
        if (value !== undefined && value !== '') fresh[name] = stringAttribute(value);
      }
      if (token !== undefined) fresh[ATTRIBUTES.token] = stringAttribute(token);
      const scopedId = scopedDeliveryId({
        deliveryId: letter.attributes.get(ATTRIBUTES.deliveryId) ?? letter.messageId,
        scope: letter.attributes.get(ATTRIBUTES.scope),
      });
      await send(
        queueUrl,
        { body: letter.body, attributes: fresh, delayMs: 0 },
        fifoIdsOf(scopedId, randomUUID()),
        'replaying a dead letter',
      );
    },
  };

  /** Refuses a job whose largest message (its next one, or its dead letter) would not fit. */
  async function checkSize(job: QueuedDelivery, body: string, token: string | undefined): Promise<void> {
    const bytes = Buffer.byteLength(body) + attributeBytes(jobAttributes(job, token)) + RESERVED_BYTES;
    const limit = await attributes.messageLimit();
    if (bytes > limit) {
      throw new JobTooLargeError(
        `sqs: the job of ${job.delivery.deliveryId} needs ${bytes} bytes with what its next messages and its dead letter carry; ${queueName} takes messages of ${limit} bytes`,
        bytes,
        limit,
      );
    }
  }

  let checked = false;
  /** The consumer side, refused without a store; its first use checks the backoff against the queue's retention. */
  function consumer(): ConsumerContext {
    if (context === undefined) throw refuse('CONFIGURATION_ERROR', noStoreToConsume(queueName));
    if (!checked) {
      checked = true;
      const longest = settings.attempts > 1 ? settings.retryDelayMs(settings.attempts - 1) : 0;
      attributes.retentionSeconds().then(
        (seconds) => {
          if (longest >= seconds * 1000) {
            onError(
              new Error(
                `the backoff waits ${longest} ms before the last try, and ${queueName} keeps a message ${seconds} s (MessageRetentionPeriod): such a retry would be deleted before it runs; raise the retention or lower the backoff`,
              ),
            );
          }
        },
        () => {},
      );
    }
    return context;
  }

  const queue: SqsDeliveryQueue = {
    name: 'sqs',
    queueUrl,
    deadLetterQueueUrl,

    async enqueue(job: QueuedDelivery): Promise<{ duplicate: boolean }> {
      const scopedId = scopedDeliveryId(job);
      const body = sqsBody(queuedDeliveryJson(job));
      // Before the record is claimed: a job too large is never recorded. A token is a UUID's length.
      await checkSize(job, body, records === undefined ? undefined : randomUUID());
      const claimed = await records?.claimJob(scopedId);
      if (records !== undefined && claimed === undefined) return { duplicate: true };
      try {
        // A revived job is deduplicated on its revival, and without a store on its receipt, so that the
        // 5-minute deduplication interval of an earlier message never swallows the service's replay.
        const revival =
          records === undefined ? `\nreceived ${job.receivedAt}` : claimed?.revived === undefined ? '' : `\n${claimed.revived}`;
        await send(
          queueUrl,
          { body, attributes: jobAttributes(job, claimed?.token), delayMs: 0 },
          fifoIdsOf(scopedId, fifoId(scopedId + revival)),
          `sqs enqueue of ${job.delivery.deliveryId}`,
        );
      } catch (error) {
        // Not durable: the record goes, so that the service's retry enqueues it again.
        await records?.releaseJob(scopedId, claimed?.token).catch(() => {});
        throw errorOf(error);
      }
      return { duplicate: false };
    },

    work(process: (job: QueueJob) => Promise<JobResult>, { concurrency }: { concurrency: number }): QueueWorker {
      return poll(
        {
          client,
          queueUrl,
          context: consumer(),
          waitTimeSeconds: settings.waitTimeSeconds,
          visibilityTimeoutSeconds: settings.visibilityTimeoutSeconds,
          queueVisibilitySeconds: () => attributes.visibilitySeconds(),
          timeoutMs,
          pauseMs: 1_000,
        },
        process,
        concurrency,
      );
    },

    async deadLetters({ limit = 100 }: { limit?: number } = {}) {
      if (limit <= 0) return [];
      return listDeadLetters(access, limit);
    },

    async replay(letter: DeadLetterRef): Promise<boolean> {
      const wanted = scopedDeliveryId(letter);
      return (await replayLetters(access, (scopedId) => scopedId === wanted, true)) === 1;
    },

    replayAll: () => replayLetters(access, () => true, false),

    // The client is the application's: nothing of the producer side to close.
    async close() {},

    async bodyLimitBytes() {
      return (await attributes.messageLimit()) - RESERVED_BYTES - ENVELOPE_BYTES;
    },
  };
  SQS_INTERNALS.set(queue, { consumer, queueName, onError });
  return queue;
}
