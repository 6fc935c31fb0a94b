// What the queue reads of SQS's queue attributes, each read once (or, for the in-flight count, at most
// every 10 s): the dead-letter queue its redrive policy names, the message size limit a job's messages
// must fit in (the queue's and its dead-letter queue's MaximumMessageSize, the smaller), the visibility
// timeout a worker renews while a job runs, the retention a retry's delay must stay within, and the
// messages in flight.
import { GetQueueAttributesCommand, GetQueueUrlCommand, type QueueAttributeName } from '@aws-sdk/client-sqs';
import { bounded, type SqsClientLike } from './sqs-client';

/** SQS's default and largest MaximumMessageSize since August 2025: what is assumed when the queue cannot say. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;
const IN_FLIGHT_FRESH_MS = 10_000;

/** The dead-letter queue's URL: `given`, or the one the queue's redrive policy names (read on first need). */
export function deadLetterQueueFinder(settings: {
  client: SqsClientLike;
  queueUrl: string;
  queueName: string;
  timeoutMs: number;
  given: string | undefined;
}): () => Promise<string> {
  const { client, queueUrl, queueName, timeoutMs } = settings;
  let found: Promise<string> | undefined = settings.given === undefined ? undefined : Promise.resolve(settings.given);
  return () => {
    found ??= (async () => {
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
    found.catch(() => {
      found = undefined;
    });
    return found;
  };
}

export interface QueueAttributes {
  /** The most bytes one message of a job may take. */
  messageLimit(): Promise<number>;
  /** The queue's VisibilityTimeout, in seconds. */
  visibilitySeconds(): Promise<number>;
  /** The queue's MessageRetentionPeriod, in seconds. */
  retentionSeconds(): Promise<number>;
  /** Messages in flight (`ApproximateNumberOfMessagesNotVisible`), at most 10 s old. */
  inFlight(): Promise<number>;
}

export function queueAttributes(settings: {
  client: SqsClientLike;
  queueUrl: string;
  timeoutMs: number;
  deadLetterQueueUrl: () => Promise<string>;
  maxMessageBytes: number | undefined;
  onError: (error: Error) => void;
}): QueueAttributes {
  const { client, timeoutMs } = settings;
  const read = async (url: string, names: QueueAttributeName[]): Promise<Record<string, string>> =>
    (
      await bounded<{ Attributes?: Record<string, string> }>(
        client,
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: names }),
        timeoutMs,
        'reading the queue attributes',
      )
    ).Attributes ?? {};

  let own: Promise<Record<string, string>> | undefined;
  const ownAttributes = () => {
    own ??= read(settings.queueUrl, ['MaximumMessageSize', 'VisibilityTimeout', 'MessageRetentionPeriod']);
    own.catch(() => {
      own = undefined; // tried again next time
    });
    return own;
  };
  const number = async (name: string): Promise<number> => {
    const value = Number((await ownAttributes())[name]);
    if (!Number.isFinite(value)) throw new Error(`sqsQueue: the queue's ${name} is not a number`);
    return value;
  };

  let limit: Promise<number> | undefined;
  let inFlight: { at: number; count: Promise<number> } | undefined;
  return {
    messageLimit() {
      if (settings.maxMessageBytes !== undefined) return Promise.resolve(settings.maxMessageBytes);
      limit ??= (async () => {
        try {
          const queue = await number('MaximumMessageSize');
          // A dead letter must fit in the dead-letter queue too; without one found, the queue's own limit.
          const dead = await settings.deadLetterQueueUrl().then(
            async (url) => Number((await read(url, ['MaximumMessageSize'])).MaximumMessageSize),
            () => Number.NaN,
          );
          return Number.isFinite(dead) ? Math.min(queue, dead) : queue;
        } catch (error) {
          settings.onError(
            new Error(
              `could not read MaximumMessageSize (${error instanceof Error ? error.message : String(error)}): assuming SQS's ${SQS_MAX_MESSAGE_BYTES} bytes; pass maxMessageBytes, or allow sqs:GetQueueAttributes`,
            ),
          );
          return SQS_MAX_MESSAGE_BYTES;
        }
      })();
      return limit;
    },
    visibilitySeconds: () => number('VisibilityTimeout'),
    retentionSeconds: () => number('MessageRetentionPeriod'),
    inFlight() {
      const now = Date.now();
      if (inFlight === undefined || now - inFlight.at > IN_FLIGHT_FRESH_MS) {
        inFlight = {
          at: now,
          count: read(settings.queueUrl, ['ApproximateNumberOfMessagesNotVisible']).then((values) =>
            Number(values.ApproximateNumberOfMessagesNotVisible ?? 0),
          ),
        };
        inFlight.count.catch(() => {
          inFlight = undefined;
        });
      }
      return inFlight.count;
    },
  };
}
