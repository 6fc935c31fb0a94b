import { type HeadersInput, readHeader } from './headers';

/** What a handler gets beside the delivery. */
export interface HandlerContext {
  /** The request headers as the adapter passed them (a `Headers` or node's record). */
  readonly headers: HeadersInput;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** When the receiver got the request. */
  readonly receivedAt: Date;
  /** How many times this deliveryId has been claimed, this attempt included (counted by the store). */
  readonly attempt: number;
  /**
   * This run's fencing token: the store's count of claims of the delivery (`attempt`), so a later run
   * of the same delivery always holds a larger one, in every process. Write it beside what the
   * handler writes for the delivery and make the write conditional on it (`… WHERE fence < $token`):
   * a run whose lease lapsed while it was paused can then never overwrite what a newer run wrote, even
   * if it resumes between checking `signal` and writing. For state that several deliveries write (a
   * resource under an ordering guard), compare their versions instead.
   */
  readonly fencingToken: number;
  /** Index of the secret that verified the signature (useful while rotating secrets). */
  readonly secretIndex: number;
  /**
   * The handler's fence: aborted when the handler should stop, with a reason it can read.
   * - `LeaseLostError` (`LeaseLostError.is(signal.reason)`): the lease the handler runs under lapsed
   *   and another attempt may be running it now: write nothing more.
   * - a `TimeoutError`: the deadline passed and the receiver answered 503 (in a queue worker: the
   *   handlers passed `maxRunMs`).
   *
   * Pass it to fetch() and the like, and check it (`signal.throwIfAborted()`) before each write.
   */
  readonly signal: AbortSignal;
  /**
   * For a handler registered with `{ transactional: true }`: the store's database client inside the
   * transaction that also records the handler's completion (a `pg` client for `@hookline/postgres`).
   */
  readonly transaction?: unknown;
}

/**
 * The handler context. The AbortController and the Date are made only when a handler reads them: most
 * never do, and the hot path stays allocation-light.
 */
export class DeliveryContext implements HandlerContext {
  // The signal's state, made when first needed, and shared with a context derived from this one
  // (`withTransaction`), so a controller made through either is the one `abort()` aborts.
  private fence: { controller?: AbortController; reason?: Error } | undefined;
  private receivedDate: Date | undefined;

  constructor(
    readonly headers: HeadersInput,
    private readonly receivedAtMs: number,
    readonly attempt: number,
    readonly secretIndex: number,
  ) {}

  get fencingToken(): number {
    return this.attempt;
  }

  get receivedAt(): Date {
    this.receivedDate ??= new Date(this.receivedAtMs);
    return this.receivedDate;
  }

  header(name: string): string | undefined {
    return readHeader(this.headers, name);
  }

  get signal(): AbortSignal {
    this.fence ??= {};
    const { fence } = this;
    if (fence.controller === undefined) {
      fence.controller = new AbortController();
      if (fence.reason !== undefined) fence.controller.abort(fence.reason);
    }
    return fence.controller.signal;
  }

  /**
   * Called by the receiver when the deadline passes (in a worker, when the handlers pass `maxRunMs`) or
   * when a lease is lost. The first reason stands: a handler that stopped at the deadline is stopped.
   */
  abort(reason: Error = deadlineReason()): void {
    this.fence ??= {};
    const { fence } = this;
    if (fence.reason !== undefined) return;
    fence.reason = reason;
    fence.controller?.abort(reason);
  }

  /**
   * The context of a transactional handler: this one with `transaction`. Its signal is this one's
   * (the shared state is made first, so a controller made through either context is the same).
   */
  withTransaction(transaction: unknown): HandlerContext {
    this.fence ??= {};
    return Object.create(this, { transaction: { value: transaction, enumerable: true } }) as HandlerContext;
  }
}

function deadlineReason(): Error {
  return timeoutError('hookline: the deadline passed and the receiver answered 503; the service will retry');
}

/** An abort reason named like the platform's own timeouts (`AbortSignal.timeout()`). */
export function timeoutError(message: string): Error {
  const error = new Error(message);
  error.name = 'TimeoutError';
  return error;
}
