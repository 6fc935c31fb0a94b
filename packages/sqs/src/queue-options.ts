// The options of `sqsQueue()`, their defaults, and what is refused before anything reaches SQS: a
// setting SQS cannot express (a delay past 15 minutes needs no refusal, it is hidden in steps; a retry
// due after SQS would have deleted the message does).
import { DEFAULT_RETENTION_MS, type IdempotencyStore, refuseRenamedOptions } from '@hookline/core/adapter';
import { type JobRecords, jobRecords } from './job-records';
import type { SqsClientLike } from './sqs-client';

const HOUR_MS = 3_600_000;
/** SQS's longest retention (MessageRetentionPeriod 1,209,600 s): a copy due later is deleted before it runs. */
export const MAX_RETENTION_MS = 14 * 24 * HOUR_MS;
/** The in-flight quota SQS documents for standard and FIFO queues alike: about 120,000 messages. */
export const IN_FLIGHT_QUOTA = 120_000;

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
   * and `deadLetters()` leaves out letters of deliveries revived since; and a record per message
   * ended by a next one, so that a message SQS hands out again never forks its job. Needed to
   * consume (`receiver.work()`, `sqsHandler()`); a web function that only enqueues may go without
   * (then every enqueue sends a message, and the worker's claim still runs the handlers once).
   */
  store?: IdempotencyStore;
  /**
   * What the store keys of this queue's records start with.
   * @default 'hookline:sqs:<queue name>:'
   */
  prefix?: string;
  /**
   * Tries per job, the first included, before it is dead-lettered.
   * @default 7
   */
  attempts?: number;
  /**
   * Delay between tries: exponential from `delayMs` (10 s, 20 s, 40 s, …), or fixed. SQS delays in
   * whole seconds: a delay is rounded up to the next second. The longest (before the last try) must
   * be under 14 days, SQS's longest retention.
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
   * counts); without it, the queue's own. While a job runs, `work()` renews it every third of it, so a
   * handler may run longer (up to the receiver's `maxRunMs`, then its try fails).
   */
  visibilityTimeoutMs?: number;
  /**
   * The queue's `MaximumMessageSize` (the smaller of the queue's and its dead-letter queue's), in
   * bytes. Without it the queue reads both once (`GetQueueAttributes`); give it where the function may
   * not read them. A job whose messages would not fit is refused with `JobTooLargeError`, and the
   * receiver handles that delivery in the request.
   * @default read from the queues (1,048,576 if they cannot be read)
   */
  maxMessageBytes?: number;
  /**
   * Messages in flight (`ApproximateNumberOfMessagesNotVisible`) from which a job that failed is
   * dead-lettered rather than hidden until its retry: on a FIFO queue every retry waits as a hidden
   * message in flight (as does, on a standard queue, one delayed past 15 minutes), and SQS stops
   * handing out messages at about 120,000, new deliveries included. Read at most every 10 s.
   * @default 100_000
   */
  maxInFlight?: number;
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

/** The options after defaults and checks. */
export interface ResolvedQueueOptions {
  client: SqsClientLike;
  queueUrl: string;
  queueName: string;
  fifo: boolean;
  attempts: number;
  retryDelayMs: (triesSpent: number) => number;
  maxStalls: number;
  timeoutMs: number;
  waitTimeSeconds: number;
  visibilityTimeoutSeconds: number | undefined;
  maxMessageBytes: number | undefined;
  maxInFlight: number;
  records: JobRecords | undefined;
  onError: (error: Error) => void;
}

function positive(name: string, value: number, integer = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new RangeError(`sqsQueue: ${name} must be ${integer ? 'an integer' : 'a number'} ≥ 0, got ${String(value)}`);
  }
  return value;
}

/** The queue name of a queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`). */
export function nameOf(queueUrl: string): string {
  return queueUrl.replace(/\/+$/, '').split('/').pop() ?? '';
}

export function resolveQueueOptions(options: SqsQueueOptions): ResolvedQueueOptions {
  refuseRenamedOptions('sqsQueue', options, {
    keyPrefix: 'prefix',
    waitTimeSeconds: 'waitTimeMs',
    visibilityTimeoutSeconds: 'visibilityTimeoutMs',
  });
  const { client, queueUrl } = options;
  if (typeof client?.send !== 'function') throw new TypeError('sqsQueue: client must be an SQSClient from @aws-sdk/client-sqs v3');
  if (typeof queueUrl !== 'string' || !/^https?:\/\/[^/]+\/.+/.test(queueUrl)) {
    throw new TypeError(
      `sqsQueue: queueUrl must be the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>), got ${String(queueUrl)}`,
    );
  }
  const queueName = nameOf(queueUrl);
  const attempts = options.attempts ?? 7;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`sqsQueue: attempts must be an integer ≥ 1, got ${attempts}`);
  const backoff = options.backoff ?? { type: 'exponential', delayMs: 10_000 };
  positive('backoff.delayMs', backoff.delayMs);
  const retryDelayMs = (triesSpent: number) =>
    backoff.type === 'fixed' ? backoff.delayMs : backoff.delayMs * 2 ** Math.max(0, triesSpent - 1);
  // The retry after the last failed try but one waits longest; SQS deletes a message after 14 days at most.
  const longest = attempts > 1 ? retryDelayMs(attempts - 1) : 0;
  if (!(longest < MAX_RETENTION_MS)) {
    throw new RangeError(
      `sqsQueue: with attempts ${attempts}, the ${backoff.type} backoff from ${backoff.delayMs} ms waits ${longest} ms before the last try, and SQS keeps a message at most 14 days (${MAX_RETENTION_MS} ms): lower attempts or backoff.delayMs`,
    );
  }
  const waitTimeMs = positive('waitTimeMs', options.waitTimeMs ?? 20_000);
  if (waitTimeMs > 20_000) throw new RangeError(`sqsQueue: waitTimeMs must be at most 20000 (SQS's longest poll), got ${waitTimeMs}`);
  const maxMessageBytes = options.maxMessageBytes === undefined ? undefined : positive('maxMessageBytes', options.maxMessageBytes, true);
  if (maxMessageBytes !== undefined && (maxMessageBytes < 1_024 || maxMessageBytes > 1_048_576)) {
    throw new RangeError(`sqsQueue: maxMessageBytes must be SQS's MaximumMessageSize, from 1024 to 1048576, got ${maxMessageBytes}`);
  }
  const timeoutMs = positive('commandTimeoutMs', options.commandTimeoutMs ?? 5_000);
  const keepCompletedMs = options.keepCompletedMs ?? DEFAULT_RETENTION_MS;
  return {
    client,
    queueUrl,
    queueName,
    fifo: queueName.endsWith('.fifo'),
    attempts,
    retryDelayMs,
    maxStalls: positive('maxStalls', options.maxStalls ?? 5, true),
    timeoutMs,
    // SQS counts both in whole seconds.
    waitTimeSeconds: Math.ceil(waitTimeMs / 1000),
    visibilityTimeoutSeconds:
      options.visibilityTimeoutMs === undefined
        ? undefined
        : Math.ceil(positive('visibilityTimeoutMs', options.visibilityTimeoutMs) / 1000),
    maxMessageBytes,
    maxInFlight: positive('maxInFlight', options.maxInFlight ?? 100_000, true),
    records:
      options.store === undefined
        ? undefined
        : jobRecords(
            options.store,
            options.prefix ?? `hookline:sqs:${queueName}:`,
            keepCompletedMs,
            options.keepDeadLettersMs ?? MAX_RETENTION_MS,
            // A next message's sender has this long to send it: two SQS calls' bounds, and a margin.
            2 * timeoutMs + 5_000,
          ),
    onError: guarded(
      options.onError ?? ((error: Error) => console.error(`hookline sqs queue "${queueName}": ${error.message}`)),
      queueName,
    ),
  };
}

/** `onError` as the queue calls it, from timers and settling alike: a listener that throws is reported, never rethrown. */
function guarded(onError: (error: Error) => void, queueName: string): (error: Error) => void {
  return (error) => {
    try {
      onError(error);
    } catch (listenerError) {
      console.error(`hookline sqs queue "${queueName}": its onError listener threw`, listenerError, 'on', error);
    }
  };
}
