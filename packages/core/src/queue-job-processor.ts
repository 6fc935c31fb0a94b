/**
 * The worker's processing of one job, for consumers the platform hands jobs to. `receiver.work()` fetches
 * jobs from its queue in a long-running process; a Cloudflare Worker's `queue()` handler or a Lambda
 * function fed by SQS is invoked with a batch instead and must run each job itself, then ack, retry or
 * dead-letter it by what the processing resolved with.
 *
 * Attached to the receiver as a non-enumerable `Symbol.for` property (as the direct receive is), so
 * the receiver's public shape stays as it is and the ESM and CommonJS builds recognise each other's.
 */
import { refuse } from './answers';
import type { JobResult, QueueJob } from './queue';

const PROCESS_JOB = Symbol.for('hookline.processQueueJob.v1');

type JobProcessor = (job: QueueJob) => Promise<JobResult>;

export function attachJobProcessor(receiver: object, process: JobProcessor): void {
  Object.defineProperty(receiver, PROCESS_JOB, { value: process });
}

/**
 * What `receiver.work()` does with each job, as a function: it checks the job's shape, runs the handlers
 * through the receiver's store (claimed in its `work:` key space, so a job handed over twice runs them
 * to success once) and resolves with what the backend must do (`done`, `dead` with a reason, `wait`
 * without spending a try), or rejects to ask for a retry with backoff. For queue backends whose
 * platform pushes jobs to a handler (`queueConsumer()` in `@hookline/cloudflare`). Throws a
 * `CONFIGURATION_ERROR` at once when `receiver` was not made by `createReceiver()`.
 *
 * @example
 * const process = queueJobProcessor(receiver);
 * const result = await process({ payload: JSON.parse(message.body), attempt: message.attempts, maxAttempts: 4 });
 */
export function queueJobProcessor(receiver: object): JobProcessor {
  const process = (receiver as { [PROCESS_JOB]?: JobProcessor } | null)?.[PROCESS_JOB];
  if (typeof process !== 'function') {
    throw refuse('CONFIGURATION_ERROR', 'queueJobProcessor() needs a receiver made by createReceiver() from @hookline/core.');
  }
  return process;
}
