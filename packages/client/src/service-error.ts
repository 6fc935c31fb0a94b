import { serviceErrorCodeFor } from '@hookline/core/adapter';

/**
 * The error codes of docs/service-contract.md §5, and the ones the client adds itself: `NETWORK_ERROR`
 * and `TIMEOUT` when no answer came (status 0, retried), and for an answer the client refuses to use,
 * `INVALID_RESPONSE`, `REDIRECT_REFUSED`, `TOO_MANY_REDIRECTS` and `RESPONSE_TOO_LARGE`, which carry the
 * answer's HTTP status and are never retried (a second try would get the same answer).
 */
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
  /** A success answer whose body is not JSON. */
  | 'INVALID_RESPONSE'
  /**
   * A redirect the client does not follow: to another origin (the API key goes to the base URL's origin
   * only), or one it cannot check (a Location that is not a URL; an opaque redirect, status 0, from a
   * fetch that hides it). `details.targetOrigin` names where it pointed, when known.
   */
  | 'REDIRECT_REFUSED'
  /** More same-origin redirects in a row than `maxRedirects`. */
  | 'TOO_MANY_REDIRECTS'
  /** An answer body over `maxResponseBytes`, declared by Content-Length or seen while reading; the rest was not read. */
  | 'RESPONSE_TOO_LARGE'
  // The service uses more specific codes (suspended or pending accounts) that it does not list.
  | (string & {});

/** The fields a `ServiceError` is built from. */
export interface ServiceErrorInit {
  /** HTTP status; 0 when no answer came. */
  status: number;
  code: ServiceErrorCode;
  message: string;
  /** `error.details` as the service sent it (VALIDATION_ERROR: `field` and `issue`), or the client's facts about a refused answer. */
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
 * answer (part 7), a non-JSON error answer (code from the status), no answer at all
 * (`NETWORK_ERROR`, `TIMEOUT`, status 0), or an answer the client refuses (a cross-origin redirect, a
 * body over `maxResponseBytes`: see `ServiceErrorCode`). Thrown after the retries the rules allow.
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
  /** HTTP status; 0 when no answer came, or when a browser's fetch hid a redirect (REDIRECT_REFUSED). */
  readonly status: number;
  /** The service's `error.code`, or one of the client's own (NETWORK_ERROR, TIMEOUT, REDIRECT_REFUSED, …). */
  readonly code: ServiceErrorCode;
  /** `error.details`, when the service sent any; for the client's refusals, what it refused (`targetOrigin`, `maxResponseBytes`, …). */
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
  return serviceErrorCodeFor(status) ?? (status >= 500 ? 'INTERNAL_ERROR' : `HTTP_${status}`);
}
