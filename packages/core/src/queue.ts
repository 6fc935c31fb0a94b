import type { Delivery } from './events';

/**
 * One delivery as it travels through a queue in answer-fast mode. The receiver verified its signature,
 * envelope and freshness on receipt; a worker trusts it as is and never verifies it again (secrets
 * rotate and timestamps age while a job waits).
 */
export interface QueuedDelivery {
  /** The verified envelope: event, deliveryId, timestamp, data. */
  delivery: Delivery<string, unknown>;
  /**
   * The tenant's key scope ('' with static secrets; `tenant:<tenant>:` with a per-tenant resolver,
   * the tenant escaped): two tenants may send the same deliveryId, so a backend de-duplicates on
   * `scopedDeliveryId()`, which no tenant id or deliveryId can make meet another's. Opaque to a backend.
   */
  scope?: string;
  /** When the receiver got the request, in milliseconds since the epoch. */
  receivedAt: number;
  /** Index of the secret that verified the signature. */
  secretIndex: number;
  /** The W3C trace context active on receipt (`traceparent`), when a tracer set one. */
  traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent`. */
  tracestate?: string;
}

/** A job as a worker gets it from the queue backend. */
export interface QueueJob {
  /** What was enqueued, as the backend stored it: the worker checks its shape before trusting it. */
  readonly payload: unknown;
  /** This try, counted from 1 by the backend. */
  readonly attempt: number;
  /** Tries the backend makes before it dead-letters the job. */
  readonly maxAttempts: number;
  /**
   * The consumer's fence for this job, for a backend whose platform can suspend it (a Lambda
   * execution environment frozen and thawed): aborted when the job was handed back and its lease may
   * have lapsed since, the handlers' `context.signal` is aborted with a `LeaseLostError` (its `cause`
   * is this signal's reason), so a handler still running stops before it writes over its copy.
   */
  readonly signal?: AbortSignal;
}

/**
 * What the worker's processor resolves with.
 *
 * - `done`: the handlers succeeded (or had already: a duplicate job).
 * - `dead`: the job can never succeed (PermanentFailure, a corrupt payload, an event no handler takes
 *   any more): the backend moves it to the dead letters at once, with `reason`; `kind` says which.
 * - `wait`: nothing failed, the job cannot run yet: its resource is busy (an ordering guard's lock),
 *   another worker holds the delivery right now, its predecessor has not been seen, or the worker is
 *   shutting down with the job unfinished. The backend runs it again after `delayMs` **without
 *   spending a try** (`QueueJob.attempt` stays as it is). `delayMs` already holds the jitter that keeps
 *   colliding jobs apart.
 *
 * A processor that rejects asks for a retry with backoff (one try spent); after the last try the
 * backend dead-letters the job.
 */
export type JobResult =
  | { status: 'done' }
  | { status: 'dead'; reason: string; kind?: DeadJobKind }
  | { status: 'wait'; delayMs: number; reason: string };

/**
 * Why the worker ended a job at once (a `dead` result): a handler threw `PermanentFailure`, the payload
 * is not a job the receiver enqueued (`corrupt`), or no handler takes its event any more. `reason` is
 * the text for people (and may change); a backend or a test that sorts dead letters reads this. A
 * backend that keeps it with the dead letter does so beside `reason` (the memory queue does).
 */
export type DeadJobKind = 'permanent' | 'corrupt' | 'unhandled';

/**
 * A running consumer. `close()` stops taking jobs and resolves once the running ones finished, or
 * once `closeTimeoutMs` (an option of `receiver.work()`) has passed: the jobs still running then are
 * handed back to the queue (a `wait` result) and run again later, elsewhere, without spending a try.
 */
export interface QueueWorker {
  close(): Promise<void>;
}

/** A dead-lettered delivery, as `deadLetters()` lists it; `replay()` takes it back as it was listed. */
export interface DeadLetter {
  deliveryId: string;
  /**
   * The tenant's key scope the delivery was received under (`'tenant:<tenant>:'` with a per-tenant
   * secret resolver, the tenant escaped), absent with static secrets. Two tenants' dead letters of one
   * deliveryId differ here. `tenantOfScope()` from `@hookline/core/adapter` reads the tenant back.
   */
  scope?: string;
  event: string;
  /** Tries made. */
  attempts: number;
  /** The last failure's message (or the reason the job was ended without retry). */
  lastError: string;
  /** When the job was dead-lettered. */
  failedAt: Date;
}

/**
 * What `enqueue` rejects with when the job is larger than the queue can carry (its message size
 * limit, with everything the backend adds to a message). The receiver then handles the delivery in
 * the request, as synchronous mode would (claim, handlers, answer), instead of answering 503 until the
 * service gives up on it: the queue will never take it. The receiver knows it by its `code`, so a
 * backend whose enqueue runs elsewhere (in a Worker, across a binding) can reject with an error of its
 * own carrying `code: 'JOB_TOO_LARGE'`.
 */
export class JobTooLargeError extends Error {
  readonly code = 'JOB_TOO_LARGE';
  constructor(
    message: string,
    /** The job's size as the backend counts it, in bytes, when known. */
    readonly bytes?: number,
    /** The most the backend carries, in bytes, when known. */
    readonly limitBytes?: number,
  ) {
    super(message);
    this.name = 'JobTooLargeError';
  }

  /** Whether `error` says that the queue cannot carry the job (a `JobTooLargeError`, or any error with its code). */
  static is(error: unknown): boolean {
    return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'JOB_TOO_LARGE';
  }
}

/** Which dead letter to replay: what `deadLetters()` listed, or a bare deliveryId (no scope). */
export type DeadLetterRef = Pick<DeadLetter, 'deliveryId' | 'scope'> | string;

/**
 * The scoped id a queue de-duplicates on (and names its job by): `(scope ?? '') + deliveryId`. A
 * receiver's scopes end at their first ':' after their tag (store-keys.ts), so two different (scope,
 * deliveryId) pairs never give one id; `splitScopedId()` reads it back.
 */
export function scopedDeliveryId(ref: DeadLetterRef | Pick<QueuedDelivery, 'delivery' | 'scope'>): string {
  if (typeof ref === 'string') return ref;
  return (ref.scope ?? '') + ('delivery' in ref ? ref.delivery.deliveryId : ref.deliveryId);
}

/**
 * A durable queue backend for answer-fast mode (`createReceiver({ queue })`): `@hookline/bullmq`,
 * `@hookline/pg-boss`, or your own. Every method waits on something outside the process, so each must
 * be bounded by the backend (connection and command timeouts).
 */
export interface DeliveryQueue {
  /** The backend's name, for messages and traces (`'bullmq'`, `'pg-boss'`). */
  readonly name: string;
  /**
   * The time limit the backend puts on each of its calls, when it bounds them itself. An enqueue
   * bounded that way, no later than the receiver's `storeTimeoutMs`, gets no second timer from the
   * receiver: one time limit, not two.
   * @default undefined (the receiver bounds every enqueue by `storeTimeoutMs`)
   */
  readonly commandTimeoutMs?: number;
  /**
   * Writes the job durably and resolves only then. Idempotent on the job's `scopedDeliveryId()`:
   * enqueueing one the queue already holds (waiting, delayed, running or completed) resolves with
   * `{ duplicate: true }` and adds no second job. One the queue holds as a dead letter is put back
   * with a fresh set of tries and answers `{ duplicate: false }`: the service's replay of a delivery
   * that never completed must run it. Rejects when the job may not be durable (the receiver then
   * answers 503 and the service retries: the receipt claimed nothing, so there is nothing to release).
   */
  enqueue(job: QueuedDelivery): Promise<{ duplicate: boolean }>;
  /**
   * Starts consuming with `concurrency` jobs at once, each handed to `process`, and acts on its
   * result (`JobResult`): complete, dead-letter, delay without spending a try, or (a rejection) retry
   * with backoff. The returned `close()` stops fetching, waits for the running `process` calls (the
   * receiver settles each by its own close bound), then resolves.
   */
  work(process: (job: QueueJob) => Promise<JobResult>, options: { concurrency: number }): QueueWorker;
  /** Dead-lettered deliveries, newest first, each with its scope. */
  deadLetters(options?: { limit?: number }): Promise<DeadLetter[]>;
  /**
   * Puts one dead-lettered delivery back in the queue with a fresh set of tries: pass what
   * `deadLetters()` listed (its `scope` picks the tenant's job). False when no dead letter matches.
   */
  replay(letter: DeadLetterRef): Promise<boolean>;
  /** Puts every dead-lettered delivery back; resolves with how many. */
  replayAll(): Promise<number>;
  /** Closes the producer side's connections (workers are closed through their own handles). */
  close(): Promise<void>;
  /**
   * The largest delivery body, in bytes, that this queue always carries, for a backend with a message
   * size limit (SQS's `MaximumMessageSize`, Cloudflare Queues' 128 KB), less what it adds to each job
   * and message. The receiver asks once, when it is created, and warns when its `maxBodyBytes` is
   * above it: a larger delivery is still accepted, and its enqueue rejects with `JobTooLargeError`, so
   * it is handled in the request. Absent, or resolving with undefined: no limit worth a warning.
   */
  bodyLimitBytes?(): Promise<number | undefined>;
}

const JOB_JSON = Symbol.for('hookline.queuedDeliveryJson.v1');

/**
 * The job as JSON, for a backend that stores it as text. For a job the receiver queued, that JSON was
 * made when the job was handed over, around the verified body's own text (already one JSON object), so
 * the parsed delivery is not serialised a second time: in the accepted-rate benchmark the web process
 * spent 85.8 instead of 96.8 µs of CPU per queued 1 KB delivery. A job made elsewhere (a test, a
 * replay) or a copy of one (a spread) is serialised with JSON.stringify; a backend that changes a job
 * in place serialises it itself. The delivery read back may carry top-level fields the service added
 * beyond the envelope's four; the worker hands handlers those four only, as the receiver does.
 *
 * @example
 * await redis.set(key, queuedDeliveryJson(job));
 */
export function queuedDeliveryJson(job: QueuedDelivery): string {
  return (job as { [JOB_JSON]?: string })[JOB_JSON] ?? JSON.stringify(job);
}

/** Gives `job` its JSON: `bodyText` (the verified body, one JSON object) as the delivery, the other fields as JSON.stringify writes them. */
export function withBodyJson(job: QueuedDelivery, bodyText: string): void {
  const { delivery, ...rest } = job; // rest always holds receivedAt and secretIndex: never `{}`
  // Not enumerable: a spread or JSON.stringify of the job leaves it out.
  Object.defineProperty(job, JOB_JSON, { value: `{"delivery":${bodyText},${JSON.stringify(rest).slice(1)}` });
}

/**
 * The receiver's own time limit for an enqueue on `queue`: `Infinity` (no timer) when the queue
 * bounds its calls no later than `storeTimeoutMs` itself, so that one timer runs, not two.
 */
export function enqueueTimeoutMs(queue: DeliveryQueue, storeTimeoutMs: number): number {
  const own = queue.commandTimeoutMs;
  return own !== undefined && own > 0 && own <= storeTimeoutMs ? Number.POSITIVE_INFINITY : storeTimeoutMs;
}
