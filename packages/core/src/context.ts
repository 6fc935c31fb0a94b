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
  /** Index of the secret that verified the signature (useful while rotating secrets). */
  readonly secretIndex: number;
  /**
   * Fires when the deadline passes and the receiver has answered 503 (in a queue worker: when the
   * handlers pass `maxRunMs`); pass it to fetch() and the like.
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
  private controller: AbortController | undefined;
  private abortReason: Error | undefined;
  private receivedDate: Date | undefined;

  constructor(
    readonly headers: HeadersInput,
    private readonly receivedAtMs: number,
    readonly attempt: number,
    readonly secretIndex: number,
  ) {}

  get receivedAt(): Date {
    this.receivedDate ??= new Date(this.receivedAtMs);
    return this.receivedDate;
  }

  header(name: string): string | undefined {
    return readHeader(this.headers, name);
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Called by the receiver when the deadline passes (or, in a worker, when the handlers pass `maxRunMs`). */
  abort(reason: Error = deadlineReason()): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
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
