/**
 * The receiver's entry for one queued job, for a backend whose platform hands the jobs in rather than
 * the backend fetching them in `work()`: an SQS event source mapping invokes a Lambda function with a
 * batch of records, and the function runs each through the same per-job processing as
 * `receiver.work()` (shape check, claim in the `work:` key space, handlers, settle), then tells the
 * platform what became of it.
 *
 * Attached as a non-enumerable symbol property, like the direct receive (direct-receive.ts), so it
 * adds nothing to the receiver's public interface. `Symbol.for`, so the ESM and CommonJS builds of
 * this package recognise each other's.
 */
import type { DeliveryQueue, JobResult, QueueJob } from './queue';

const JOB_ENTRY = Symbol.for('hookline.jobEntry.v1');

/** What `queueJobEntry()` finds on a receiver. */
export interface QueueJobEntry {
  /** The `queue` the receiver was created with, if any. */
  readonly queue: DeliveryQueue | undefined;
  /**
   * The receiver's `leaseMs`: how long a job handed back unfinished (its invocation ran out of time)
   * waits, so that it runs again only once its handler's lease has lapsed, as `receiver.work()`'s
   * close hands jobs back.
   */
  readonly leaseMs: number;
  /**
   * Runs one job as `receiver.work()` would and resolves with what the queue should do with it
   * (`done`, `dead`, `wait`), or rejects to ask for a retry that spends a try.
   */
  process(job: QueueJob): Promise<JobResult>;
}

export function attachJobEntry(receiver: object, entry: QueueJobEntry): void {
  Object.defineProperty(receiver, JOB_ENTRY, { value: entry });
}

/**
 * The job entry of a receiver made by `createReceiver()`, or undefined for anything else. For queue
 * backends whose consumer is invoked by its platform (`sqsHandler()` in `@hookline/sqs`).
 *
 * @example
 * const entry = queueJobEntry(receiver);
 * const result = await entry.process({ payload, attempt: 1, maxAttempts: 5 });
 */
export function queueJobEntry(receiver: unknown): QueueJobEntry | undefined {
  if (typeof receiver !== 'object' || receiver === null) return undefined;
  return (receiver as { [JOB_ENTRY]?: QueueJobEntry })[JOB_ENTRY];
}
