import { codeForStatus, ServiceError } from './service-error';
import { backoffMs, isRetryableStatus, parseRetryAfter, rateLimitWaitMs, type RetryReason } from './retry-policy';
import { readBoundedText } from './read-bounded-text';
import { fetchSameOrigin } from './same-origin-fetch';

/** What `onRetry` is told before each wait. */
export interface RetryInfo {
  /** 1 for the first retry, up to `retries`. */
  retry: number;
  /** How long the client waits before it. */
  delayMs: number;
  reason: RetryReason;
  /** The failure being retried. */
  error: ServiceError;
}

/** How requests are sent and retried; `createServiceClient` fills it from its options. */
export interface TransportOptions {
  apiKey: string;
  baseUrl: string;
  retries: number;
  timeoutMs: number;
  maxRetryAfterMs: number;
  /** Same-origin redirects followed in a row; another origin's are never followed. */
  maxRedirects: number;
  /** The largest answer body read, in bytes. */
  maxResponseBytes: number;
  fetch: typeof globalThis.fetch;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  onRetry?: (info: RetryInfo) => void;
}

/** Per-call options of every operation. */
export interface CallOptions {
  /** Cancels the call, the retries and the waits between them; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** One call: method, path under `/v1`, optional JSON body. Resolves with the parsed answer (undefined when empty). */
export type Send = (method: string, path: string, body?: unknown, options?: CallOptions) => Promise<unknown>;

/** A wait that ends early, rejecting, when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The one place requests are made and retried (docs/service-contract.md §7): a 4xx other than 429 is never
 * retried; a 429 waits for `Retry-After` and backs off exponentially if it repeats; a 5xx, a network
 * error or a time-out backs off 1, 2, 4, 8, 16 s with jitter; at most `retries` retries in all. A redirect
 * to another origin and an answer over `maxResponseBytes` end the call at once.
 */
export function createTransport(options: TransportOptions): Send {
  const base = options.baseUrl.replace(/\/+$/, '');

  async function attempt(method: string, path: string, body: unknown, headers: Record<string, string>, signal?: AbortSignal) {
    const request = `${method} ${path}`;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.timeoutMs);
    try {
      // One try covers the redirects it follows and the reading of the body, all within timeoutMs.
      const response = await fetchSameOrigin(
        `${base}${path}`,
        { method, headers, body: body === undefined ? undefined : JSON.stringify(body) },
        { fetch: options.fetch, maxRedirects: options.maxRedirects, signal: controller.signal, request },
      );
      const text = await readBoundedText(response, options.maxResponseBytes, request);
      return { response, text, request };
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      if (ServiceError.is(cause)) return { error: cause }; // an answer refused (redirect, size): not a network failure
      const [code, message] = timedOut
        ? (['TIMEOUT', `no answer to ${request} within ${options.timeoutMs} ms`] as const)
        : (['NETWORK_ERROR', `${request} reached no service at ${base}: ${describe(cause)}`] as const);
      return { error: new ServiceError({ status: 0, code, message, request, cause }) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  return async function send(method, path, body, { signal } = {}) {
    signal?.throwIfAborted();
    const headers: Record<string, string> = { 'x-api-key': options.apiKey, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    // The service asks for an idempotency key so a retried POST cannot act twice, but does not name the
    // header (docs/service-contract.md §7): this one is a guess the real service may ignore. It stays the
    // same across retries.
    if (method === 'POST') headers['idempotency-key'] = crypto.randomUUID();

    let rateLimited = 0;
    for (let retry = 1; ; retry++) {
      const result = await attempt(method, path, body, headers, signal);
      let error: ServiceError;
      if ('error' in result) error = result.error!;
      else {
        const { response, text, request } = result;
        if (response.ok) return parseSuccess(text, response, request);
        error = errorFromAnswer(response, text, request);
      }
      const reason = reasonFor(error);
      if (reason === undefined || retry > options.retries) throw error;
      if (reason === 'rate-limited') rateLimited++;
      let delayMs =
        reason === 'rate-limited'
          ? rateLimitWaitMs(rateLimited, error.retryAfterMs, options.random)
          : Math.max(backoffMs(retry, options.random), error.retryAfterMs ?? 0);
      if (delayMs > options.maxRetryAfterMs) throw error; // the service asks for a longer wait than a call should block
      delayMs = Math.max(0, delayMs);
      options.onRetry?.({ retry, delayMs, reason, error });
      await options.sleep(delayMs, signal);
    }
  };
}

/** Answers the client refuses: a second try would get the same redirect or the same oversized body. */
const REFUSED_ANSWER_CODES = new Set(['REDIRECT_REFUSED', 'TOO_MANY_REDIRECTS', 'RESPONSE_TOO_LARGE']);

function reasonFor(error: ServiceError): RetryReason | undefined {
  if (REFUSED_ANSWER_CODES.has(error.code)) return undefined; // even with a 5xx status
  if (error.code === 'NETWORK_ERROR') return 'network-error';
  if (error.code === 'TIMEOUT') return 'timeout';
  if (!isRetryableStatus(error.status)) return undefined;
  return error.status === 429 ? 'rate-limited' : 'server-error';
}

function parseSuccess(text: string, response: Response, request: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ServiceError({
      status: response.status,
      code: 'INVALID_RESPONSE',
      message: `${request} answered ${response.status} with a body that is not JSON: ${snippet(text)}`,
      request,
      cause,
      ...requestIdOf(response, undefined),
    });
  }
}

/** A service error answer, JSON or not (a proxy's HTML 502 still becomes a ServiceError). */
function errorFromAnswer(response: Response, text: string, request: string): ServiceError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const error = (parsed as { error?: unknown } | undefined)?.error;
  const body = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : undefined;
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const code = typeof body?.code === 'string' ? body.code : codeForStatus(response.status);
  const message =
    typeof body?.message === 'string'
      ? body.message
      : `${request} answered ${response.status}${text.trim() === '' ? ' with no body' : ` with a body that is not the service's error shape: ${snippet(text)}`}`;
  const details = typeof body?.details === 'object' && body.details !== null ? (body.details as Record<string, unknown>) : undefined;
  return new ServiceError({
    status: response.status,
    code,
    message,
    request,
    ...(details === undefined ? {} : { details }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...requestIdOf(response, body),
  });
}

/** The document names no request-id header; these are the usual ones. */
function requestIdOf(response: Response, body: Record<string, unknown> | undefined): { requestId?: string } {
  const value = response.headers.get('x-request-id') ?? response.headers.get('request-id') ?? body?.requestId;
  return typeof value === 'string' && value !== '' ? { requestId: value } : {};
}

function snippet(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function describe(cause: unknown): string {
  // undici puts the socket error (ECONNREFUSED…) in `cause`.
  const inner = (cause as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (inner?.code !== undefined) return inner.code;
  if (typeof inner?.message === 'string' && inner.message !== '') return inner.message; // e.g. "bad port"
  return cause instanceof Error ? cause.message : String(cause);
}
