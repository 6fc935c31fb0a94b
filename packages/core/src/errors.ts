/**
 * The codes the receiver answers with. The service's own codes (docs/service-contract.md §5) where one fits,
 * plus the receiver-side ones it lacks (INVALID_SIGNATURE, METHOD_NOT_ALLOWED, REQUEST_TIMEOUT, PAYLOAD_TOO_LARGE,
 * CONFIGURATION_ERROR).
 */
export type HooklineErrorCode =
  | 'VALIDATION_ERROR'
  | 'INVALID_SIGNATURE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'REQUEST_TIMEOUT'
  | 'PAYLOAD_TOO_LARGE'
  | 'INTERNAL_ERROR'
  | 'CONFIGURATION_ERROR'
  | 'SERVICE_UNAVAILABLE';

/** The one table from code to HTTP status. */
const STATUS_BY_CODE: Readonly<Record<HooklineErrorCode, number>> = {
  VALIDATION_ERROR: 400,
  INVALID_SIGNATURE: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  INTERNAL_ERROR: 500,
  CONFIGURATION_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

/** Structured field-level information, like the service's `error.details`. */
export type ErrorDetails = Record<string, unknown>;

const BRAND = Symbol.for('hookline.error');

/**
 * The one error class of hookline. Its `code` selects the HTTP status through `STATUS_BY_CODE`;
 * `toJSON()` gives the service's error shape `{ error: { code, message, details? } }`.
 *
 * @example
 * throw new HooklineError('CONFIGURATION_ERROR', 'secret is empty: pass the signingSecret the service returned');
 */
export class HooklineError extends Error {
  /** Stable identifier for program logic. */
  readonly code: HooklineErrorCode;
  /** Structured information, e.g. `{ field, issue }` for VALIDATION_ERROR. */
  readonly details: ErrorDetails | undefined;
  /** Headers the answer must carry (e.g. `retry-after`). */
  readonly headers: Record<string, string> | undefined;
  /** Marks instances across copies of the package (two versions installed side by side). */
  readonly [BRAND] = true;

  constructor(
    code: HooklineErrorCode,
    message: string,
    options: { details?: ErrorDetails; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HooklineError';
    this.code = code;
    this.details = options.details;
    this.headers = options.headers;
  }

  /** The HTTP status this error is answered with. */
  get status(): number {
    return STATUS_BY_CODE[this.code];
  }

  /** The service's error shape. */
  toJSON(): { error: { code: HooklineErrorCode; message: string; details?: ErrorDetails } } {
    const error: { code: HooklineErrorCode; message: string; details?: ErrorDetails } = {
      code: this.code,
      message: this.message,
    };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }

  /** True for a HooklineError from any copy of the package. */
  static is(value: unknown): value is HooklineError {
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }
}

const PERMANENT = Symbol.for('hookline.permanent-failure');

/**
 * Throw this from a handler to say "this delivery can never succeed, do not retry it" (a deleted
 * customer, a message you will never know). The receiver answers 2xx so the service stops its
 * 31-hour retry schedule, and reports the failure through the `failed` hook.
 *
 * @example
 * receiver.on('message.failed', async (delivery) => {
 *   if (!(await findMessage(delivery.data.messageId))) throw new PermanentFailure('unknown message');
 * });
 */
export class PermanentFailure extends Error {
  readonly [PERMANENT] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentFailure';
  }

  /** True for a PermanentFailure from any copy of the package. */
  static is(value: unknown): value is PermanentFailure {
    return typeof value === 'object' && value !== null && (value as { [PERMANENT]?: unknown })[PERMANENT] === true;
  }
}

const LEASE_LOST = Symbol.for('hookline.lease-lost');

/**
 * The reason `context.signal` is aborted with when the receiver finds that a lease the handler runs
 * under is gone: it lapsed (the process was paused, its event loop stalled, the store was unreachable
 * for longer than `leaseMs`) and another attempt may have claimed the delivery and be running the same
 * handler now. It is the handler's fence: stop before writing, or fence the write itself with
 * `context.fencingToken`.
 *
 * @example
 * receiver.on('message.delivered', async ({ data }, { signal }) => {
 *   const status = await lookUp(data.messageId, { signal });
 *   signal.throwIfAborted(); // a LeaseLostError (or the deadline's TimeoutError): write nothing
 *   await save(status);
 * });
 */
export class LeaseLostError extends Error {
  readonly [LEASE_LOST] = true;

  constructor(
    message: string,
    /** The store key whose lease was lost: the delivery's, a named handler's record or an ordering lock. */
    readonly key: string,
  ) {
    super(message);
    this.name = 'LeaseLostError';
  }

  /** True for a LeaseLostError from any copy of the package. */
  static is(value: unknown): value is LeaseLostError {
    return typeof value === 'object' && value !== null && (value as { [LEASE_LOST]?: unknown })[LEASE_LOST] === true;
  }
}
