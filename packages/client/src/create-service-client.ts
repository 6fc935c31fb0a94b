import { modeOfApiKey, type ServiceMode } from './api-key';
import { DEFAULT_MAX_RESPONSE_BYTES } from './read-bounded-text';
import { DEFAULT_RETRIES } from './retry-policy';
import { DEFAULT_MAX_REDIRECTS } from './same-origin-fetch';
import { abortableSleep, createTransport, type RetryInfo } from './transport';
import { createWebhooksResource, type WebhooksResource } from './webhooks';

/** Options of `createServiceClient()`. */
export interface ServiceClientOptions {
  /** `sk_sandbox_…` or `sk_live_…`; the prefix sets `client.mode`. Keep it on servers, out of source control. */
  apiKey: string;
  /** The service's `{base_url}` (paths like `/v1/webhooks` are appended), e.g. the emulator's `url`. */
  baseUrl: string | URL;
  /**
   * Retries after a 429, a 5xx, a network error or a time-out; `0` sends every request once.
   * @default 5
   */
  retries?: number;
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
  /**
   * Milliseconds one try may take before it counts as failed (and is retried).
   * @default 30_000
   */
  timeoutMs?: number;
  /**
   * A `Retry-After` longer than this is not waited for: the RATE_LIMITED error is thrown at once, with
   * `retryAfterMs`, for the caller to schedule.
   * @default 120_000
   */
  maxRetryAfterMs?: number;
  /**
   * Redirects within the base URL's origin followed in a row before the call fails with
   * TOO_MANY_REDIRECTS; `0` follows none. A redirect to another origin is never followed, whatever this
   * says: the call fails with REDIRECT_REFUSED and the API key is not sent there.
   * @default 5
   */
  maxRedirects?: number;
  /**
   * The largest answer body the client reads, in bytes. A larger one (by its Content-Length, or once
   * that many bytes have arrived) is cancelled and the call fails with RESPONSE_TOO_LARGE, not retried.
   * @default 10_485_760 (10 MiB)
   */
  maxResponseBytes?: number;
  /** Told before every retry: for logs and metrics. */
  onRetry?: (info: RetryInfo) => void;
  /**
   * How the client waits between tries. Tests pass a fake to record the waits instead of sleeping.
   * @default a timer that an AbortSignal cuts short
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * The jitter source, in [0, 1); `() => 0.5` gives the exact 1, 2, 4, 8, 16 s steps.
   * @default Math.random
   */
  random?: () => number;
}

/** A client of the messaging service; see `createServiceClient`. */
export interface ServiceClient {
  /** `sandbox` or `live`, from the key's prefix. */
  readonly mode: ServiceMode;
  /** The base URL requests go to. */
  readonly baseUrl: string;
  /** The webhook operations. */
  readonly webhooks: WebhooksResource;
}

/**
 * A typed client of the service's webhook operations (docs/service-contract.md §6, operations 1–6), with
 * the retry rules of §7 and one error class, `ServiceError`. The API key goes only to the base URL's
 * origin (a redirect elsewhere is refused) and answers are read up to `maxResponseBytes`. It uses only
 * Web APIs, so it runs on Node 20+, Bun, Deno and Cloudflare Workers. A malformed key is refused here,
 * before any request, and never printed whole.
 *
 * @example
 * const client = createServiceClient({ apiKey: process.env.SERVICE_API_KEY!, baseUrl: process.env.SERVICE_BASE_URL! });
 * const webhook = await client.webhooks.create({ url: 'https://example.com/webhooks', events: ['message.delivered'] });
 * console.log(webhook.id, 'store this secret:', webhook.signingSecret);
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const mode = modeOfApiKey(options?.apiKey);
  const baseUrl = checkBaseUrl(options.baseUrl);
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new RangeError(`createServiceClient: retries must be a whole number ≥ 0, got ${retries}`);
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!(timeoutMs > 0)) throw new RangeError(`createServiceClient: timeoutMs must be positive, got ${timeoutMs}`);
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  if (!Number.isInteger(maxRedirects) || maxRedirects < 0) {
    throw new RangeError(`createServiceClient: maxRedirects must be a whole number ≥ 0, got ${maxRedirects}`);
  }
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes < 1) {
    throw new RangeError(`createServiceClient: maxResponseBytes must be a whole number of bytes ≥ 1, got ${maxResponseBytes}`);
  }
  const send = createTransport({
    apiKey: options.apiKey,
    baseUrl,
    retries,
    timeoutMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 120_000,
    maxRedirects,
    maxResponseBytes,
    // Read at call time, so a fetch mocked or polyfilled after construction is the one used.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    sleep: options.sleep ?? abortableSleep,
    random: options.random ?? Math.random,
    ...(options.onRetry === undefined ? {} : { onRetry: options.onRetry }),
  });
  return { mode, baseUrl, webhooks: createWebhooksResource(send) };
}

function checkBaseUrl(value: string | URL | undefined): string {
  const text = value === undefined ? '' : String(value);
  try {
    const url = new URL(text);
    if (url.protocol === 'https:' || url.protocol === 'http:') return text.replace(/\/+$/, '');
  } catch {
    // the error below says what is expected
  }
  throw new TypeError(`createServiceClient: baseUrl must be the service's http(s) base address, got ${JSON.stringify(text)}`);
}
