/**
 * The receiver's call to the queue (answer-fast mode's enqueue): bounded like a store call, but the
 * queue's own part everywhere it is reported. Its time goes to the `hookline:queue` channel and the
 * trace's `queueMs`, its failure is the `queue` phase, and its time-out names the queue, so an answer,
 * a log line or a trace never blames the store for what the queue did (or the reverse).
 */
import type { Attempt } from './attempt';
import { queueTimed, traceQueueOperation } from './diagnostics';

/** An enqueue that did not answer within its time limit. */
export class QueueTimeoutError extends Error {
  constructor(
    /** The queue backend's name (`DeliveryQueue.name`). */
    readonly queue: string,
    readonly timeoutMs: number,
  ) {
    super(`hookline: the queue (${queue}) did not answer the enqueue within ${timeoutMs} ms (storeTimeoutMs)`);
    this.name = 'QueueTimeoutError';
  }
}

/**
 * Bounds and times one enqueue on the queue named `queue`: `Infinity` sets no timer (a backend that
 * bounds its calls itself: `enqueueTimeoutMs` in queue.ts). A call that throws synchronously is a
 * rejection like any other.
 */
export function callQueue<T>(attempt: Attempt, queue: string, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  const startedAt = queueTimed(attempt) ? performance.now() : -1;
  if (attempt.trace !== undefined) attempt.trace.queue = queue;
  let result: Promise<T>;
  try {
    result = Promise.resolve(call());
  } catch (error) {
    result = Promise.reject(error);
  }
  const bounded = timeoutMs === Number.POSITIVE_INFINITY ? result : withTimeLimit(result, queue, timeoutMs);
  if (startedAt < 0) return bounded;
  return bounded.then(
    (value) => {
      traceQueueOperation(attempt, queue, 'enqueue', performance.now() - startedAt);
      return value;
    },
    (error: unknown) => {
      traceQueueOperation(attempt, queue, 'enqueue', performance.now() - startedAt, error);
      throw error;
    },
  );
}

function withTimeLimit<T>(result: Promise<T>, queue: string, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new QueueTimeoutError(queue, timeoutMs)), timeoutMs);
    result.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
