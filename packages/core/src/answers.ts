/**
 * Every HTTP status the receiver answers is decided here (docs/ARCHITECTURE.md, "Conventions"). Adapters only copy
 * `{ status, headers, body }` onto their framework's response.
 *
 * The service treats any 2xx within 30 s as success and anything else as a reason to retry, up to
 * 7 attempts over ~31 h (docs/service-contract.md §2.4). So: 2xx only once the handlers finished, or in
 * answer-fast mode once the queue holds the job durably (and for a duplicate, an unknown event, a
 * permanent failure); a retryable status when a retry can succeed; 4xx for requests no retry can fix.
 */
import { HooklineError, type HooklineErrorCode } from './errors';
import type { Outcome, WaitReason } from './outcome';

/** What the receiver answers; adapters write it to their response as is. A fresh object every time: an adapter (or a Response implementation) may keep or change it. */
export interface ReceiverAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const JSON_TYPE = 'application/json';

function json(status: number, body: string, extra?: Record<string, string>): ReceiverAnswer {
  return { status, headers: extra === undefined ? { 'content-type': JSON_TYPE } : { 'content-type': JSON_TYPE, ...extra }, body };
}

// Not shared between deliveries, though the 2xx answers never vary: @hono/node-server's Response, for
// one, keeps its init headers and adds Content-Length to them. Two small objects cost nanoseconds.
/** Handlers finished: the delivery is done. */
export const handledAnswer = (): ReceiverAnswer => json(200, '{"ok":true}');
/** A repeat of a completed delivery, or in answer-fast mode of one the queue holds: handlers not run again. */
export const duplicateAnswer = (): ReceiverAnswer => json(200, '{"ok":true,"duplicate":true}');
/** No handler for this event (an event added to the catalogue later, say): 2xx, or the service retries it for 31 h. */
export const unhandledAnswer = (): ReceiverAnswer => json(200, '{"ok":true,"unhandled":true}');
/** Answer-fast mode: the delivery is durably in the queue; workers run the handlers. */
export const queuedAnswer = (): ReceiverAnswer => json(202, '{"ok":true,"queued":true}');
/** A handler threw `PermanentFailure`: 2xx so the service stops retrying something that cannot succeed. */
export const permanentFailureAnswer = (): ReceiverAnswer => json(200, '{"ok":true,"failed":true}');

/**
 * The receipt's renderer (the worker's is job-result.ts): the refusal an outcome is answered with, in
 * the service's error shape, or undefined for an outcome answered 2xx (`acceptedAnswer`). `event`
 * names the delivery's event in a handler's failure.
 */
export function refusalOf(outcome: Outcome, event: string): HooklineError | undefined {
  switch (outcome.kind) {
    case 'wait':
      return inFlight(outcome.waitMs, outcome.reason);
    case 'unavailable':
    case 'misconfigured':
      return outcome.refusal;
    case 'failed':
      return handlerFailed(event, outcome.error);
    default:
      return undefined;
  }
}

/** The 2xx answer of an outcome `refusalOf` gives no refusal for. */
export function acceptedAnswer(outcome: Outcome): ReceiverAnswer {
  switch (outcome.kind) {
    case 'duplicate':
      return duplicateAnswer();
    case 'unhandled':
      return unhandledAnswer();
    case 'queued':
      return queuedAnswer();
    case 'permanent':
      return permanentFailureAnswer();
    default:
      return handledAnswer();
  }
}

/**
 * Any HooklineError in the service's error shape; anything else is a 500 INTERNAL_ERROR.
 *
 * @example
 * const answer = errorAnswer(new HooklineError('VALIDATION_ERROR', 'event is missing'));
 * // → { status: 400, headers: { 'content-type': 'application/json' }, body: '{"error":{"code":"VALIDATION_ERROR",…}}' }
 */
export function errorAnswer(error: unknown): ReceiverAnswer {
  const known = HooklineError.is(error)
    ? error
    : new HooklineError('INTERNAL_ERROR', 'The receiver failed unexpectedly; the service will retry.', { cause: error });
  return json(known.status, JSON.stringify(known.toJSON()), known.headers);
}

/**
 * Builds a refusal: a HooklineError whose code decides the status. Every refusal below goes through
 * it; an adapter that needs one of its own (a framework's own limit, say) calls it too.
 */
export function refuse(code: HooklineErrorCode, message: string, options?: ConstructorParameters<typeof HooklineError>[2]): HooklineError {
  return new HooklineError(code, message, options);
}

/** Absent, malformed or unmatched signature: 401; a retry of the same bytes can only fail again. */
export function invalidSignature(reason: 'missing' | 'malformed' | 'mismatch' | 'no_secret'): HooklineError {
  const messages = {
    missing: 'The x-service-signature header is missing.',
    malformed: 'The x-service-signature header is not 64 lower-case hex digits.',
    mismatch:
      'The x-service-signature header does not match the body for any configured secret. Check the secret and that nothing re-serialised the body.',
    no_secret: 'No signing secret is configured for this request.',
  } as const;
  return refuse('INVALID_SIGNATURE', messages[reason], { details: { field: 'x-service-signature', issue: reason } });
}

/** A header that disagrees with the signed body: 400 (headers are not signed, the body is). */
export function headerMismatch(header: string, field: string): HooklineError {
  return refuse('VALIDATION_ERROR', `The ${header} header does not match the body's ${field}.`, {
    details: { field: header, issue: 'does_not_match_body' },
  });
}

/** Body timestamp outside the replay window: 400. */
export function staleTimestamp(issue: 'too_old' | 'in_future', limitMs: number): HooklineError {
  const message =
    issue === 'too_old'
      ? `The delivery's timestamp is older than the replay window (${limitMs} ms); it is refused so a captured delivery cannot be replayed.`
      : `The delivery's timestamp is more than ${limitMs} ms in the future; check this server's clock.`;
  return refuse('VALIDATION_ERROR', message, { details: { field: 'timestamp', issue } });
}

/** Body over the limit: 413, decided while streaming. */
export function payloadTooLarge(limit: number): HooklineError {
  return refuse('PAYLOAD_TOO_LARGE', `The body is larger than maxBodyBytes (${limit} bytes).`, {
    details: { limit },
    headers: { connection: 'close' },
  });
}

/** The node bridge got a request for another path than the one it serves. */
export function notFound(path: string): HooklineError {
  return refuse('NOT_FOUND', `No webhook endpoint at this path; deliveries go to ${path}.`);
}

/** The client did not send the whole body within the body-read time limit: 408, the connection is closed. */
export function requestTimeout(limitMs: number): HooklineError {
  return refuse('REQUEST_TIMEOUT', `The request body did not arrive within ${limitMs} ms.`, {
    details: { limitMs },
    headers: { connection: 'close' },
  });
}

/** Only POST carries deliveries. */
export function methodNotAllowed(method: string): HooklineError {
  return refuse('METHOD_NOT_ALLOWED', `Webhook deliveries are POSTed; got ${method}.`, { headers: { allow: 'POST' } });
}

/**
 * The delivery cannot run yet (outcome.ts, `wait`): another attempt holds its lease (`in_progress`),
 * its handler's record or its resource, or its predecessor was not seen. 409 with Retry-After: the
 * service retries later.
 */
export function inFlight(retryAfterMs: number, reason: WaitReason = 'in_progress'): HooklineError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return refuse('CONFLICT', 'This delivery is being handled by another attempt right now; retry later.', {
    details: { reason, retryAfterSeconds: seconds },
    headers: { 'retry-after': String(seconds) },
  });
}

/** The store could not be reached: fail closed (503), run nothing; the service retries. */
export function storeUnavailable(cause: unknown, reason: 'store_unavailable' | 'store_timeout' = 'store_unavailable'): HooklineError {
  const message =
    reason === 'store_timeout'
      ? 'The idempotency store did not answer in time (storeTimeoutMs); the delivery was not processed and the service will retry.'
      : 'The idempotency store is unavailable; the delivery was not processed and the service will retry.';
  return refuse('SERVICE_UNAVAILABLE', message, {
    details: { reason },
    cause,
  });
}

/** The queue did not take the job durably: 503, nothing was queued and the service retries. `details.queue` names the queue. */
export function queueUnavailable(
  queue: string,
  cause: unknown,
  reason: 'queue_unavailable' | 'queue_timeout' = 'queue_unavailable',
): HooklineError {
  const message =
    reason === 'queue_timeout'
      ? `The queue (${queue}) did not answer in time (storeTimeoutMs); the delivery was not processed and the service will retry.`
      : `The queue (${queue}) did not take the delivery; it was not processed and the service will retry.`;
  return refuse('SERVICE_UNAVAILABLE', message, { details: { reason, queue }, cause });
}

/** A store refused the delivery's key itself (not an outage): 500, a bug to fix rather than wait out. */
export function storeDataError(cause: unknown): HooklineError {
  return refuse('INTERNAL_ERROR', "The idempotency store refused this delivery's key; the delivery was not processed.", {
    details: { reason: 'store_data_error' },
    cause,
  });
}

/**
 * The store lacks its table, schema or binding (a StoreNotSetUpError): 500 CONFIGURATION_ERROR, since
 * no retry can succeed until the deployment is fixed. The store's message names what is missing and
 * the fix; the answer reaches only a sender whose signature verified.
 */
export function storeNotSetUp(cause: Error): HooklineError {
  return refuse('CONFIGURATION_ERROR', `The idempotency store is not set up, so no delivery can be processed: ${cause.message}`, {
    details: { reason: 'store_not_set_up' },
    cause,
  });
}

/** The handlers outran the deadline: 503; they go on running and the next attempt sees the outcome. */
export function deadlinePassed(deadlineMs: number): HooklineError {
  return refuse(
    'SERVICE_UNAVAILABLE',
    `The handlers did not finish within ${deadlineMs} ms; they are still running and the next attempt will see their outcome.`,
    {
      details: { reason: 'deadline' },
    },
  );
}

/** A handler threw: 500 so the service retries; the record was released. */
export function handlerFailed(event: string, cause: unknown): HooklineError {
  return refuse('INTERNAL_ERROR', `A handler for ${event} threw; the delivery was not completed and the service will retry it.`, { cause });
}

/** The framework consumed the body before hookline saw the raw bytes. */
export function bodyAlreadyParsed(fix: string): HooklineError {
  return refuse('CONFIGURATION_ERROR', `hookline needs the raw request body to verify the signature, but it was already parsed. ${fix}`);
}
