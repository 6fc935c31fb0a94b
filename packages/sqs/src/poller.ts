// `work()` for a long-running process: one receive loop per worker, asking for as many messages as it
// has free slots (at most 10, SQS's limit) with long polls, so that an idle worker costs one request
// per `waitTimeSeconds` and a message is handed over as soon as it arrives. `close()` aborts the poll
// in flight rather than waiting out its 20 s, so it resolves as soon as the running jobs have settled
// (the receiver bounds those by its closeTimeoutMs). A message SQS handed to the aborted poll just
// before the abort comes back after the queue's visibility timeout, counted as one stall.
//
// While a job runs, its message's visibility is renewed every third of the visibility timeout (never
// past 12 hours from its receive): a handler longer than the visibility timeout does not make SQS hand
// the message to another worker. The renewal ends with the job, which the receiver ends at `maxRunMs`.
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { type JobResult, type QueueJob, type QueueWorker, wakeablePause } from '@hookline/core/adapter';
import { type ConsumerContext, consume, HIDE_MARGIN_MS, MAX_VISIBILITY_MS } from './consume';
import { received } from './dead-letters';
import type { ReceivedMessage } from './message';
import { bounded, type SqsClientLike } from './sqs-client';

export interface PollerSettings {
  client: SqsClientLike;
  queueUrl: string;
  context: ConsumerContext;
  waitTimeSeconds: number;
  visibilityTimeoutSeconds: number | undefined;
  /** The queue's own VisibilityTimeout, read when `visibilityTimeoutSeconds` is not given. */
  queueVisibilitySeconds: () => Promise<number>;
  timeoutMs: number;
  /** How long the loop pauses after a failed receive (SQS unreachable). */
  pauseMs: number;
}

export function poll(settings: PollerSettings, process: (job: QueueJob) => Promise<JobResult>, concurrency: number): QueueWorker {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be an integer ≥ 1, got ${concurrency}`);
  const { client, queueUrl, context } = settings;
  const running = new Set<Promise<void>>();
  const stop = new AbortController();
  const { pause, wake } = wakeablePause();

  // Acknowledgements of the jobs that settle together go out as one DeleteMessageBatch (up to 10).
  const pending: { handle: string; done: () => void }[] = [];
  let flushing: Promise<void> | undefined;
  function flush(): Promise<void> {
    flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      flushing = undefined;
      const batch = pending.splice(0, 10);
      if (pending.length > 0) void flush();
      try {
        const { Failed = [] } = await bounded<{ Failed?: { Id: string; Message?: string }[] }>(
          client,
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((one, i) => ({ Id: `m${i}`, ReceiptHandle: one.handle })),
          }),
          settings.timeoutMs,
          'deleting messages',
        );
        for (const failed of Failed) context.onError(new Error(`deleting a settled message failed: ${failed.Message ?? failed.Id}`));
      } catch (error) {
        // They come back after their visibility timeout; the store's claim answers them as duplicates.
        context.onError(error instanceof Error ? error : new Error(String(error)));
      } finally {
        for (const one of batch) one.done();
      }
    });
    return flushing;
  }
  const acknowledge = (handle: string) =>
    new Promise<void>((done) => {
      pending.push({ handle, done });
      void flush();
    });

  // The visibility the messages are received with, for the renewals.
  const visibility: Promise<number | undefined> =
    settings.visibilityTimeoutSeconds === undefined
      ? settings.queueVisibilitySeconds().catch((error: unknown) => {
          context.onError(new Error(`cannot renew messages' visibility: ${error instanceof Error ? error.message : String(error)}`));
          return undefined;
        })
      : Promise.resolve(settings.visibilityTimeoutSeconds);

  /** Keeps `message` hidden while its job runs; the returned function stops. */
  function keepHidden(message: ReceivedMessage): () => void {
    let timer: ReturnType<typeof setInterval> | undefined;
    let stopped = false;
    void visibility.then((seconds) => {
      if (stopped || seconds === undefined || seconds <= 0) return;
      timer = setInterval(
        () => {
          const left = Math.floor((MAX_VISIBILITY_MS - HIDE_MARGIN_MS - (Date.now() - message.receivedAt)) / 1000);
          if (left <= 0) return clearInterval(timer);
          context.changeVisibility(message, Math.min(seconds, left)).catch((error: unknown) => {
            if (!stopped) context.onError(error instanceof Error ? error : new Error(String(error)));
          });
        },
        Math.max(200, (seconds * 1000) / 3),
      );
      (timer as { unref?: () => void }).unref?.();
    });
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  async function handle(message: Message, receivedAt: number): Promise<void> {
    const one = received(message, receivedAt);
    const hidden = (job: QueueJob) => {
      const stop = keepHidden(one);
      return process(job).finally(stop);
    };
    if ((await consume(context, one, hidden)) === 'ack') await acknowledge(one.receiptHandle);
  }

  const loop = (async () => {
    while (!stop.signal.aborted) {
      if (running.size >= concurrency) {
        await Promise.race(running);
        continue;
      }
      let messages: Message[];
      // SQS received them after this: a message may be hidden up to 12 hours from then.
      const receivedAt = Date.now();
      try {
        const answer = await bounded<{ Messages?: Message[] }>(
          client,
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: Math.min(10, concurrency - running.size),
            WaitTimeSeconds: settings.waitTimeSeconds,
            ...(settings.visibilityTimeoutSeconds === undefined ? {} : { VisibilityTimeout: settings.visibilityTimeoutSeconds }),
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
          }),
          settings.waitTimeSeconds * 1000 + settings.timeoutMs,
          'receiving messages',
          stop.signal,
        );
        messages = answer.Messages ?? [];
      } catch (error) {
        if (stop.signal.aborted) break;
        context.onError(error instanceof Error ? error : new Error(String(error)));
        await pause(settings.pauseMs);
        continue;
      }
      for (const message of messages) {
        const task: Promise<void> = handle(message, receivedAt).finally(() => running.delete(task));
        running.add(task);
      }
    }
  })();

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        stop.abort();
        wake();
        await loop;
        while (running.size > 0) await Promise.allSettled([...running]);
      })();
      return closing;
    },
  };
}
