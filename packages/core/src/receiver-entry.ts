/**
 * The receiver's one entry for adapters beside its public methods, attached to every receiver
 * `createReceiver()` makes:
 *
 * - `receive`: `receiver.handle()` without the promise when every step answered synchronously (static
 *   secrets, the memory store, synchronous handlers). `handle()` must return a promise (its public
 *   contract), and awaiting it costs a microtask turn and an allocation; the node:http bridge writes
 *   such an answer at once instead (`receiveDirect`; bench/README.md, "the synchronous path"). It is
 *   taken only while `receiver.handle` is still the receiver's own: a wrapper or a spy replacing it is
 *   honoured.
 * - `jobs`: one queued job's processing, for a backend whose platform hands the jobs in rather than
 *   the backend fetching them in `work()` (an SQS event source mapping invoking a Lambda function, a
 *   Cloudflare Worker's `queue()`): each job runs through the same processing as `receiver.work()`
 *   (shape check, claim in the `work:` key space, handlers, settle), and the platform is told what
 *   became of it (`queueJobEntry`).
 *
 * A non-enumerable symbol property, so it adds nothing to the receiver's public interface and
 * `{ ...receiver, handle: wrapped }` does not copy it. `Symbol.for`, so the ESM and CommonJS builds of
 * this package recognise each other's.
 */
import type { ReceiverAnswer } from './answers';
import type { Awaitable } from './awaitable';
import type { DeliveryQueue, JobResult, QueueJob } from './queue';
import type { ReceiverInput } from './endpoint';

const ENTRY = Symbol.for('hookline.receiverEntry.v1');

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

interface ReceiverEntry {
  /** The `handle` that `receive` stands for: the shortcut is taken only while `receiver.handle` is this one. */
  readonly handle: unknown;
  readonly receive: (input: ReceiverInput) => Awaitable<ReceiverAnswer>;
  readonly jobs: QueueJobEntry;
}

export function attachEntry(receiver: { handle: unknown }, entry: Omit<ReceiverEntry, 'handle'>): void {
  Object.defineProperty(receiver, ENTRY, { value: { handle: receiver.handle, ...entry } satisfies ReceiverEntry });
}

function entryOf(receiver: unknown): ReceiverEntry | undefined {
  if (typeof receiver !== 'object' || receiver === null) return undefined;
  return (receiver as { [ENTRY]?: ReceiverEntry })[ENTRY];
}

/** Hands `input` to the receiver: without a promise when it answered synchronously. */
export function receiveDirect(
  receiver: { handle(input: ReceiverInput): Promise<ReceiverAnswer> },
  input: ReceiverInput,
): Awaitable<ReceiverAnswer> {
  const entry = (receiver as { [ENTRY]?: ReceiverEntry })[ENTRY];
  return entry !== undefined && entry.handle === receiver.handle ? entry.receive(input) : receiver.handle(input);
}

/**
 * The job entry of a receiver made by `createReceiver()`, or undefined for anything else. For queue
 * backends whose consumer is invoked by its platform (`sqsHandler()` in `@hookline/sqs`,
 * `queueConsumer()` in `@hookline/cloudflare`).
 *
 * @example
 * const entry = queueJobEntry(receiver);
 * const result = await entry.process({ payload, attempt: 1, maxAttempts: 5 });
 */
export function queueJobEntry(receiver: unknown): QueueJobEntry | undefined {
  return entryOf(receiver)?.jobs;
}
