import type { EventMap, ServiceEvents } from './events';
import { HooklineError } from './errors';
import type { ReceiverHooks } from './hooks';
import { memoryStore } from './memory-store';
import type { DeliveryQueue } from './queue';
import type { ReceiverLogger } from './receiver-state';
import type { IdempotencyStore } from './store';

/** One signing secret, or several while rotating (any may match; the context says which did). */
export type SecretValue = string | readonly string[];

/** What a secret resolver sees of the request. */
export interface SecretRequest {
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The request URL, when the adapter knows it (per-tenant paths such as `/webhooks/:tenant`). */
  url: string | undefined;
}

/**
 * A resolver's answer that names the tenant: its deliveries are de-duplicated in a key space of their
 * own (`namespace + tenant + ':' + deliveryId`), stable across secret rotations.
 */
export interface TenantSecret {
  tenant: string;
  secret: SecretValue;
}

type Resolved = SecretValue | TenantSecret | undefined | null;

/**
 * Per-tenant lookup: the secret(s) for this request, or `undefined`/`null` when the tenant is unknown
 * (401). Return `{ tenant, secret }` to name the tenant; otherwise the tenant's key space is derived
 * from the first secret returned, which changes when that secret rotates.
 */
export type SecretResolver = (request: SecretRequest) => Resolved | Promise<Resolved>;

const HOUR = 3_600_000;
/** The service's last retry comes ~31 h 13 min after the first attempt (0 + 30 s + 2 min + 10 min + 1 h + 6 h + 24 h). */
export const MIN_RETENTION_MS = 32 * HOUR;
/** The service counts an attempt as failed after 30 s (docs/service-contract.md §2.4). */
export const SERVICE_TIMEOUT_MS = 30_000;

/** Options of `createReceiver()`. */
export interface ReceiverOptions<E extends EventMap = ServiceEvents> {
  /**
   * The webhook's signingSecret; an array while rotating; or a function of the request for per-tenant
   * secrets. A missing or empty secret does not throw here (a build step such as `next build` may load
   * the module without runtime secrets): every delivery is then answered 500 CONFIGURATION_ERROR with
   * the fix, and the error is reported.
   */
  secret: SecretValue | SecretResolver | undefined;
  /**
   * Answer-fast mode: verify, record and enqueue the delivery on this queue (`@hookline/bullmq`,
   * `@hookline/pg-boss`), answer 202, and run the handlers in workers started with `receiver.work()`.
   * @default undefined (handlers run inside the request)
   */
  queue?: DeliveryQueue;
  /**
   * `'handler'`: the store records each named handler's success (`on(event, handler, { name })`), and
   * a retry runs only the handlers that have not succeeded; every handler must then have a name.
   * Costs one claim and one completion per handler and delivery.
   * @default 'delivery'
   */
  completion?: 'delivery' | 'handler';
  /**
   * A pino-style logger (`info/warn/error(fields, message)`): one structured line per refusal, handler
   * failure and lease loss. With neither a logger nor an `onError` listener, errors go to `console.error`.
   * Without a logger, the refusals that point at a set-up mistake (401, 400, 413, 408, 405, 404, 500
   * CONFIGURATION_ERROR) go to `console.warn`: the first of each reason with its likely cause, then a
   * count of the repeats at most once a minute. `false` writes no refusal at all (errors still go to
   * `onError` or `console.error`).
   * @default undefined (refusals noted on `console.warn`, errors on `console.error`)
   */
  logger?: ReceiverLogger | false;
  /**
   * Where deliveries are remembered across retries. Use `@hookline/redis` or `@hookline/postgres` when
   * more than one process receives.
   * @default memoryStore()
   */
  store?: IdempotencyStore;
  /**
   * Largest body accepted; larger ones get 413 before being buffered.
   * @default 1_048_576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * How long a completed delivery is remembered. Must outlive the service's retry schedule
   * (last attempt ~31 h 13 min after the first): below 32 h is refused unless `allowShortRetention`.
   * A completion is kept longer when the body's timestamp needs it: until `timestamp + maxAgeMs` (plus a
   * minute for clock drift), so a delivery timestamped in the future is remembered for as long as it
   * stays fresh enough to be accepted.
   * @default 259_200_000 (72 h)
   */
  retentionMs?: number;
  /**
   * Accept a `retentionMs` under 32 h (tests, or a store that keeps records elsewhere).
   * @default false
   */
  allowShortRetention?: boolean;
  /**
   * Replay window: a body `timestamp` older than this is refused with 400. Never larger than
   * `retentionMs`, so a captured delivery is either remembered or too old.
   * @default retentionMs
   */
  maxAgeMs?: number;
  /**
   * How far in the future a body `timestamp` may be (clock skew).
   * @default 300_000 (5 min)
   */
  maxFutureSkewMs?: number;
  /**
   * Lease of a claim; renewed by heartbeats while handlers run, so it only matters when a process dies
   * mid-handler: the next attempt after it expires runs the delivery again.
   * @default 30_000
   */
  leaseMs?: number;
  /**
   * Time the handlers get before the receiver answers 503 (they go on running). Under the service's 30 s.
   * @default 25_000
   */
  deadlineMs?: number;
  /**
   * Time limit of every store call (claim, complete, release, extend). A claim that has not answered by
   * then is answered 503 and no handler runs; the service retries. Keep it well under the service's
   * 30 s so the answer is prompt even when the store hangs.
   * @default 5_000
   */
  storeTimeoutMs?: number;
  /**
   * Longest a delivery's handlers may hold its lease. Past it the lease is no longer renewed: the
   * next attempt may claim the delivery and run it again, and the `failed` hook reports the overrun.
   * @default 300_000 (5 min)
   */
  maxRunMs?: number;
  /**
   * Time limit for reading the request body, enforced by the adapters while streaming. A client that
   * has not sent the whole body by then gets 408 REQUEST_TIMEOUT and the connection is closed.
   * @default 10_000
   */
  bodyTimeoutMs?: number;
  /**
   * Prefix of store keys, to share one store between webhooks or apps.
   * @default 'hookline:'
   */
  namespace?: string;
  /**
   * Lifecycle hooks, also settable later with `receiver.hook()`.
   * @default {} (none)
   */
  hooks?: Partial<ReceiverHooks<E>>;
  /**
   * Clock for the freshness check, in milliseconds.
   * @default Date.now
   */
  now?: () => number;
}

/** Options after defaults and checks. */
export interface ResolvedOptions {
  secrets: readonly string[] | undefined;
  /** Set when the static secret is missing: every delivery is answered with it. */
  secretError: HooklineError | undefined;
  queue: DeliveryQueue | undefined;
  logger: ReceiverLogger | undefined;
  /** No `logger` was given (not even `false`): set-up refusals are noted on `console.warn`. */
  noteRefusals: boolean;
  completion: 'delivery' | 'handler';
  resolveSecret: SecretResolver | undefined;
  store: IdempotencyStore;
  maxBodyBytes: number;
  retentionMs: number;
  maxAgeMs: number;
  maxFutureSkewMs: number;
  leaseMs: number;
  deadlineMs: number;
  storeTimeoutMs: number;
  maxRunMs: number;
  bodyTimeoutMs: number;
  namespace: string;
  now: () => number;
}

function configError(message: string): HooklineError {
  return new HooklineError('CONFIGURATION_ERROR', message);
}

function positive(name: string, value: number): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw configError(`createReceiver: ${name} must be a positive finite number of milliseconds/bytes, got ${String(value)}`);
  }
  return value;
}

/** Static secrets, checked once at construction so a missing env var fails at boot, not per request. */
export function normaliseSecrets(secret: SecretValue, where: string): readonly string[] {
  const list = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? [...secret] : [];
  if (list.length === 0 || list.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw configError(
      `${where}: the signing secret is empty or missing. Pass the signingSecret the service returned when you created the webhook (for example process.env.WEBHOOK_SECRET).`,
    );
  }
  return list;
}

function completionMode(value: unknown): 'delivery' | 'handler' {
  if (value === undefined || value === 'delivery' || value === 'handler') return value ?? 'delivery';
  throw configError(`createReceiver: completion must be 'delivery' or 'handler', got ${String(value)}.`);
}

/** Applies defaults and refuses settings that would lose or double deliveries. */
export function resolveOptions<E extends EventMap>(options: ReceiverOptions<E>): ResolvedOptions {
  if (options === null || typeof options !== 'object') throw configError('createReceiver: pass an options object with at least `secret`.');
  const { secret } = options;
  const resolveSecret = typeof secret === 'function' ? secret : undefined;
  let secrets: readonly string[] | undefined;
  let secretError: HooklineError | undefined;
  if (resolveSecret === undefined) {
    try {
      secrets = normaliseSecrets(secret as SecretValue, 'createReceiver');
    } catch (error) {
      // Deferred to the first delivery: loading the module must not need the runtime secret.
      secretError = error as HooklineError;
    }
  }
  const retentionMs = positive('retentionMs', options.retentionMs ?? 72 * HOUR);
  if (retentionMs < MIN_RETENTION_MS && options.allowShortRetention !== true) {
    throw configError(
      `createReceiver: retentionMs ${retentionMs} is under 32 h; the service retries for about 31 h 13 min, so a shorter memory would run a late retry twice. Raise it, or pass allowShortRetention: true if you really mean it.`,
    );
  }
  const maxAgeMs = positive('maxAgeMs', options.maxAgeMs ?? retentionMs);
  if (maxAgeMs > retentionMs) {
    throw configError(
      `createReceiver: maxAgeMs (${maxAgeMs}) is larger than retentionMs (${retentionMs}); a replayed delivery older than the retention would run twice. Lower maxAgeMs or raise retentionMs.`,
    );
  }
  const deadlineMs = positive('deadlineMs', options.deadlineMs ?? 25_000);
  if (deadlineMs >= SERVICE_TIMEOUT_MS) {
    throw configError(
      `createReceiver: deadlineMs ${deadlineMs} must be under 30000: the service counts an attempt failed after 30 s, so the receiver must answer before that.`,
    );
  }
  const namespace = options.namespace ?? 'hookline:';
  if (typeof namespace !== 'string') throw configError('createReceiver: namespace must be a string.');
  const { queue, logger } = options;
  if (queue !== undefined && (typeof queue?.enqueue !== 'function' || typeof queue?.work !== 'function')) {
    throw configError(
      'createReceiver: queue must be a DeliveryQueue (bullmqQueue(…) from @hookline/bullmq, pgBossQueue(…) from @hookline/pg-boss).',
    );
  }
  if (logger !== undefined && logger !== false && (typeof logger?.warn !== 'function' || typeof logger?.error !== 'function')) {
    throw configError(
      'createReceiver: logger must have info, warn and error methods taking (fields, message), as pino and most loggers do, or be false to write no refusals.',
    );
  }
  return {
    secrets,
    secretError,
    queue,
    logger: logger === false ? undefined : logger,
    noteRefusals: logger === undefined,
    completion: completionMode(options.completion),
    resolveSecret,
    store: options.store ?? memoryStore(),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes ?? 1_048_576),
    retentionMs,
    maxAgeMs,
    maxFutureSkewMs: positive('maxFutureSkewMs', options.maxFutureSkewMs ?? 300_000),
    leaseMs: positive('leaseMs', options.leaseMs ?? 30_000),
    deadlineMs,
    storeTimeoutMs: positive('storeTimeoutMs', options.storeTimeoutMs ?? 5_000),
    maxRunMs: positive('maxRunMs', options.maxRunMs ?? 300_000),
    bodyTimeoutMs: positive('bodyTimeoutMs', options.bodyTimeoutMs ?? 10_000),
    namespace,
    now: options.now ?? Date.now,
  };
}
