import { randomUUID } from 'node:crypto';
import { ChangeMessageVisibilityCommand, GetQueueAttributesCommand, GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  type DeadLetterRef,
  DEFAULT_RETENTION_MS,
  type DeliveryQueue,
  type IdempotencyStore,
  type JobResult,
  type QueuedDelivery,
  queuedDeliveryJson,
  type QueueJob,
  type QueueWorker,
  refuseRenamedOptions,
  scopedDeliveryId,
} from '@hookline/core/adapter';
import { type ConsumerContext, MAX_DELAY_MS } from './consume';
import { type DeadLetterAccess, listDeadLetters, replayLetters } from './dead-letters';
import { type JobRecords, jobRecords } from './job-records';
import {
  ATTRIBUTES,
  fifoId,
  jobAttributes,
  numberAttribute,
  type ReceivedMessage,
  type StringAttribute,
  sqsBody,
  stringAttribute,
} from './message';
import { poll } from './poller';
import { bounded, type SqsClientLike } from './sqs-client';

const HOUR_MS = 3_600_000;

/** Options of `sqsQueue()`. */
export interface SqsQueueOptions {
  /** An `SQSClient` from `@aws-sdk/client-sqs` v3. The queue never destroys or reconfigures it. */
  client: SqsClientLike;
  /** The queue's URL (a name ending in `.fifo` is a FIFO queue). Web and worker sides must use the same one. */
  queueUrl: string;
  /**
   * The dead-letter queue's URL. Without it, the queue's `RedrivePolicy` names it (read once, on first
   * need). Dead letters go there, and `deadLetters()`/`replay()` read it; give it no redrive policy
   * of its own, and the longest retention (14 days).
   */
  deadLetterQueueUrl?: string;
  /**
   * Where the queue keeps a record per delivery (the receiver's store serves: DynamoDB on Lambda), so
   * that enqueueing a delivery it holds is a duplicate, enqueueing one whose job is dead revives it,
   * and `deadLetters()` leaves out letters of deliveries revived since. Without a store, every
   * enqueue sends a message (`{ duplicate: false }`): the worker's claim still runs the handlers once.
   */
  store?: IdempotencyStore;
  /**
   * The prefix of the store keys of this queue's records.
   * @default 'hookline:sqs:<queue name>:'
   */
  keyPrefix?: string;
  /**
   * Tries per job, the first included, before it is dead-lettered.
   * @default 7
   */
  attempts?: number;
  /**
   * Delay between tries: exponential from `delayMs` (10 s, 20 s, 40 s, …), or fixed. SQS delays in
   * whole seconds: a delay is rounded up to the next second.
   * @default { type: 'exponential', delayMs: 10_000 }
   */
  backoff?: { type: 'exponential' | 'fixed'; delayMs: number };
  /**
   * Times one message may come back after its consumer stopped without a result (the process died,
   * the Lambda invocation timed out) before the consumer dead-letters it. Keep the queue's redrive
   * policy's `maxReceiveCount` above it (10 for the default): that policy is then the backstop for a
   * message that stops its consumer before it can even look.
   * @default 5
   */
  maxStalls?: number;
  /**
   * How long a delivery's job record answers an enqueue as a duplicate (with a `store`). The default
   * matches the receiver's `retentionMs`.
   * @default 72 h
   */
  keepCompletedMs?: number;
  /**
   * How long a dead record keeps a delivery's dead letter current (with a `store`): SQS's longest
   * retention, the most a dead letter can live.
   * @default 14 days
   */
  keepDeadLettersMs?: number;
  /**
   * The long poll of `work()`, in milliseconds (SQS's most is 20 s; rounded up to whole seconds).
   * @default 20_000
   */
  waitTimeMs?: number;
  /**
   * The visibility timeout `work()` receives with, in milliseconds (rounded up to whole seconds, as SQS
   * counts); without it, the queue's own. Keep it
   * above the receiver's `maxRunMs`, or a job still running comes back to another worker (whose claim
   * makes it wait).
   */
  visibilityTimeoutMs?: number;
  /**
   * The bound on each call to SQS (`enqueue`, sending a job's next message, each step of listing or
   * replaying dead letters): past it the call rejects, so the receiver answers 503 well inside the
   * service's 30 s.
   * @default 5_000
   */
  commandTimeoutMs?: number;
  /**
   * Called with errors met in the background (SQS unreachable while polling or settling a job).
   * @default logs them with console.error
   */
  onError?: (error: Error) => void;
}

/** What `sqsQueue()` returns: the `DeliveryQueue`, plus its queue URLs. */
export interface SqsDeliveryQueue extends DeliveryQueue {
  readonly queueUrl: string;
  /** The dead-letter queue's URL (from the options, or read from the queue's redrive policy). */
  deadLetterQueueUrl(): Promise<string>;
}

/** What `sqsHandler()` needs of a queue made here. */
export interface SqsInternals {
  readonly context: ConsumerContext;
  readonly queueName: string;
}

/** The internals of each queue made here, for `sqsHandler()`. */
export const SQS_INTERNALS = new WeakMap<DeliveryQueue, SqsInternals>();

function positive(name: string, value: number, integer = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new RangeError(`sqsQueue: ${name} must be ${integer ? 'an integer' : 'a number'} ≥ 0, got ${String(value)}`);
  }
  return value;
}

/** The queue name of a queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`). */
function nameOf(queueUrl: string): string {
  return queueUrl.replace(/\/+$/, '').split('/').pop() ?? '';
}

function errorOf(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
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
  refuseRenamedOptions('sqsQueue', options, { waitTimeSeconds: 'waitTimeMs', visibilityTimeoutSeconds: 'visibilityTimeoutMs' });
  const { client, queueUrl } = options;
  if (typeof client?.send !== 'function') throw new TypeError('sqsQueue: client must be an SQSClient from @aws-sdk/client-sqs v3');
  if (typeof queueUrl !== 'string' || !/^https?:\/\/[^/]+\/.+/.test(queueUrl)) {
    throw new TypeError(
      `sqsQueue: queueUrl must be the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>), got ${String(queueUrl)}`,
    );
  }
  const queueName = nameOf(queueUrl);
  const fifo = queueName.endsWith('.fifo');
  const attempts = options.attempts ?? 7;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`sqsQueue: attempts must be an integer ≥ 1, got ${attempts}`);
  const backoff = options.backoff ?? { type: 'exponential', delayMs: 10_000 };
  positive('backoff.delayMs', backoff.delayMs);
  const maxStalls = positive('maxStalls', options.maxStalls ?? 5, true);
  const timeoutMs = positive('commandTimeoutMs', options.commandTimeoutMs ?? 5_000);
  const waitTimeMs = positive('waitTimeMs', options.waitTimeMs ?? 20_000);
  if (waitTimeMs > 20_000) throw new RangeError(`sqsQueue: waitTimeMs must be at most 20000 (SQS's longest poll), got ${waitTimeMs}`);
  // SQS counts both in whole seconds.
  const waitTimeSeconds = Math.ceil(waitTimeMs / 1000);
  const visibilityTimeoutSeconds =
    options.visibilityTimeoutMs === undefined ? undefined : Math.ceil(positive('visibilityTimeoutMs', options.visibilityTimeoutMs) / 1000);
  const onError = options.onError ?? ((error: Error) => console.error(`hookline sqs queue "${queueName}": ${error.message}`));
  const records: JobRecords | undefined =
    options.store === undefined
      ? undefined
      : jobRecords(
          options.store,
          options.keyPrefix ?? `hookline:sqs:${queueName}:`,
          options.keepCompletedMs ?? DEFAULT_RETENTION_MS,
          options.keepDeadLettersMs ?? 14 * 24 * HOUR_MS,
        );

  let deadLetterUrl: Promise<string> | undefined =
    options.deadLetterQueueUrl === undefined ? undefined : Promise.resolve(options.deadLetterQueueUrl);
  function deadLetterQueueUrl(): Promise<string> {
    deadLetterUrl ??= (async () => {
      const { Attributes } = await bounded<{ Attributes?: Record<string, string> }>(
        client,
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }),
        timeoutMs,
        'reading the redrive policy',
      );
      const arn = (JSON.parse(Attributes?.RedrivePolicy ?? '{}') as { deadLetterTargetArn?: string }).deadLetterTargetArn;
      if (arn === undefined) {
        throw new Error(
          `sqsQueue: ${queueName} has no redrive policy naming a dead-letter queue; give the queue one, or pass deadLetterQueueUrl`,
        );
      }
      const [, , , , account, name] = arn.split(':');
      const { QueueUrl } = await bounded<{ QueueUrl?: string }>(
        client,
        new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }),
        timeoutMs,
        'finding the dead-letter queue',
      );
      return QueueUrl as string;
    })();
    // A failed look-up (SQS unreachable) is tried again by the next call, not cached.
    deadLetterUrl.catch(() => {
      deadLetterUrl = undefined;
    });
    return deadLetterUrl;
  }

  async function send(
    url: string,
    body: string,
    attributes: Record<string, StringAttribute>,
    delayMs: number,
    fifoIds: { group: string; deduplication: string } | undefined,
    what: string,
  ): Promise<void> {
    await bounded(
      client,
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: body,
        MessageAttributes: attributes,
        ...(fifoIds === undefined
          ? { DelaySeconds: Math.min(Math.ceil(delayMs / 1000), MAX_DELAY_MS / 1000) }
          : { MessageGroupId: fifoIds.group, MessageDeduplicationId: fifoIds.deduplication }),
      }),
      timeoutMs,
      what,
    );
  }

  // On a FIFO queue each delivery is a message group of its own: no delivery holds up another (the
  // order of one resource's deliveries is the ordering guards' job), and a copy waiting for its due
  // time blocks nothing else. The first message of a job is deduplicated on the delivery; its later
  // copies each on a fresh id.
  const fifoIdsOf = (scopedId: string, deduplication: string) => (fifo ? { group: fifoId(scopedId), deduplication } : undefined);

  const context: ConsumerContext = {
    fifo,
    attempts,
    maxStalls,
    retryDelayMs: (triesSpent) => (backoff.type === 'fixed' ? backoff.delayMs : backoff.delayMs * 2 ** Math.max(0, triesSpent - 1)),
    async send(target, message) {
      const url = target === 'queue' ? queueUrl : await deadLetterQueueUrl();
      const ids = fifoIdsOf(message.groupOf, randomUUID());
      await send(
        url,
        message.body,
        message.attributes,
        target === 'queue' ? message.delayMs : 0,
        ids,
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
    records,
    onError,
  };

  const access: DeadLetterAccess = {
    client,
    deadLetterQueueUrl,
    timeoutMs,
    records,
    async sendFresh(letter: ReceivedMessage, token: string | undefined) {
      const attributes: Record<string, StringAttribute> = { [ATTRIBUTES.tries]: numberAttribute(0) };
      for (const name of [ATTRIBUTES.deliveryId, ATTRIBUTES.scope, ATTRIBUTES.traceparent, ATTRIBUTES.tracestate]) {
        const value = letter.attributes.get(name);
        if (value !== undefined && value !== '') attributes[name] = stringAttribute(value);
      }
      if (token !== undefined) attributes[ATTRIBUTES.token] = stringAttribute(token);
      const scopedId = scopedDeliveryId({
        deliveryId: letter.attributes.get(ATTRIBUTES.deliveryId) ?? letter.messageId,
        scope: letter.attributes.get(ATTRIBUTES.scope),
      });
      await send(queueUrl, letter.body, attributes, 0, fifoIdsOf(scopedId, randomUUID()), 'replaying a dead letter');
    },
  };

  const queue: SqsDeliveryQueue = {
    name: 'sqs',
    queueUrl,
    deadLetterQueueUrl,

    async enqueue(job: QueuedDelivery): Promise<{ duplicate: boolean }> {
      const scopedId = scopedDeliveryId(job);
      const claimed = await records?.claimJob(scopedId);
      if (records !== undefined && claimed === undefined) return { duplicate: true };
      try {
        // A revived job is deduplicated on its revival, so that the 5-minute interval of its first
        // message does not swallow it.
        const deduplication = fifoId(claimed?.revived === undefined ? scopedId : `${scopedId}\n${claimed.revived}`);
        await send(
          queueUrl,
          sqsBody(queuedDeliveryJson(job)),
          jobAttributes(job, claimed?.token),
          0,
          fifoIdsOf(scopedId, deduplication),
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
          context,
          waitTimeSeconds,
          visibilityTimeoutSeconds,
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
  };
  SQS_INTERNALS.set(queue, { context, queueName });
  return queue;
}
