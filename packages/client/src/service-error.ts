/** The error codes of docs/service-contract.md §5, and the two the client adds for answers that never came. */
export type ServiceErrorCode =
  | 'VALIDATION_ERROR'
  | 'INVALID_API_KEY'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'DELIVERY_ERROR'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'UPSTREAM_ERROR'
  | 'SERVICE_UNAVAILABLE'
  /** No HTTP answer: the connection failed (status 0). */
  | 'NETWORK_ERROR'
  /** No answer within `timeoutMs` (status 0). */
  | 'TIMEOUT'
  // The service uses more specific codes (suspended or pending accounts) that it does not list.
  | (string & {});

/** The fields a `ServiceError` is built from. */
export interface ServiceErrorInit {
  /** HTTP status; 0 when no answer came. */
  status: number;
  code: ServiceErrorCode;
  message: string;
  /** `error.details` as the service sent it (VALIDATION_ERROR: `field` and `issue`). */
  details?: Record<string, unknown>;
  /** From `Retry-After` (seconds or an HTTP date), in milliseconds. */
  retryAfterMs?: number;
  /** The request id the service answered with, when it sent one. */
  requestId?: string;
  /** The request that failed, e.g. `POST /v1/webhooks`. */
  request?: string;
  cause?: unknown;
}

const BRAND = Symbol.for('hookline.client.ServiceError');

/**
 * Every refusal or failure of a service call: the service's `{"error":{"code","message","details"}}`
 * answer (part 7), a non-JSON error answer (code from the status), or no answer at all
 * (`NETWORK_ERROR`, `TIMEOUT`, status 0). Thrown after the retries the rules allow.
 *
 * @example
 * try {
 *   await client.webhooks.update(id, { isActive: false });
 * } catch (error) {
 *   if (ServiceError.is(error) && error.code === 'NOT_FOUND') console.log('already deleted');
 *   else throw error;
 * }
 */
export class ServiceError extends Error {
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The service's `error.code`, or the client's NETWORK_ERROR / TIMEOUT. */
  readonly code: ServiceErrorCode;
  /** `error.details`, when the service sent any. */
  readonly details: Record<string, unknown> | undefined;
  /** How long the service asked to wait (429 / 503 `Retry-After`), in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The service's request id, when it sent one: quote it to support. */
  readonly requestId: string | undefined;
  /** `METHOD /path` of the request. */
  readonly request: string | undefined;

  constructor(init: ServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
    this.request = init.request;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for a ServiceError from any copy of this package (a plain `instanceof` fails across two copies). */
  static is(value: unknown): value is ServiceError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** The code the service would use for a status, for error answers that carry none (a proxy's HTML page). */
export function codeForStatus(status: number): ServiceErrorCode {
  const known: Record<number, ServiceErrorCode> = {
    400: 'VALIDATION_ERROR',
    401: 'INVALID_API_KEY',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    409: 'CONFLICT',
    422: 'DELIVERY_ERROR',
    429: 'RATE_LIMITED',
    500: 'INTERNAL_ERROR',
    502: 'UPSTREAM_ERROR',
    503: 'SERVICE_UNAVAILABLE',
  };
  return known[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : `HTTP_${status}`);
}
