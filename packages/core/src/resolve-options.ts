/**
 * `createReceiver()`'s options after defaults and checks: every setting that would lose or double
 * deliveries is refused here, once, at construction.
 */
import type { EventMap } from './events';
import { refuse } from './answers';
import type { HooklineError } from './errors';
import { memoryStore } from './memory-store';
import { DEFAULT_RETENTION_MS } from './store-checks';
import type { ReceiverOptions } from './options';
import { type DeliveryQueue, enqueueTimeoutMs } from './queue';
import type { ReceiverLogger } from './logger';
import { MIN_RETENTION_MS, SERVICE_TIMEOUT_MS } from './service-schedule';
import { normaliseSecrets, type SecretResolver, type SecretValue } from './secrets';
import type { IdempotencyStore } from './store';

/** Options after defaults and checks. */
export interface ResolvedOptions {
  secrets: readonly string[] | undefined;
  /** Set when the static secret is missing: every delivery is answered with it. */
  secretError: HooklineError | undefined;
  queue: DeliveryQueue | undefined;
  logger: ReceiverLogger | undefined;
  /** No `logger` was given (not even `false`): set-up refusals and permanent failures are noted on `console.warn`. */
  consoleNotes: boolean;
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
  /** The receiver's own limit on an enqueue: `Infinity` when the queue bounds its calls itself (`enqueueTimeoutMs`). */
  enqueueTimeoutMs: number;
  maxRunMs: number;
  bodyTimeoutMs: number;
  namespace: string;
  now: () => number;
}

function configError(message: string): HooklineError {
  return refuse('CONFIGURATION_ERROR', message);
}

function positive(name: string, value: number): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw configError(`createReceiver: ${name} must be a positive finite number of milliseconds/bytes, got ${String(value)}`);
  }
  return value;
}

/** How often the heartbeat renews a running delivery's leases: a third of the lease. */
export function heartbeatIntervalMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 3));
}

const DEFAULT_STORE_TIMEOUT_MS = 5_000;

/**
 * The store calls' time limit, checked against the lease. A claim (or a renewal) may reach the store at
 * once and answer only at its time limit; the renewal after it is sent up to one heartbeat later and
 * may take as long to reach the store. A working receiver keeps every lease it holds, which is what the
 * protocol (and its model, spec/lease-protocol.pml) rests on, only when
 * 2 × storeTimeoutMs + heartbeat < leaseMs. Unset, it is 5 s, or a quarter of leaseMs when that is shorter.
 */
function storeTimeout(leaseMs: number, given: number | undefined): number {
  const storeTimeoutMs = positive('storeTimeoutMs', given ?? Math.min(DEFAULT_STORE_TIMEOUT_MS, leaseMs / 4));
  const heartbeatMs = heartbeatIntervalMs(leaseMs);
  if (2 * storeTimeoutMs + heartbeatMs < leaseMs) return storeTimeoutMs;
  const why = `a lease is renewed every leaseMs / 3 (${heartbeatMs} ms) by a store call that may take up to storeTimeoutMs, so a lease taken by a call that answers only at its time limit could lapse before the next renewal reaches the store, and another attempt could then run the same handlers. It needs 2 × storeTimeoutMs + leaseMs / 3 < leaseMs`;
  if (given === undefined) throw configError(`createReceiver: leaseMs ${leaseMs} is too short: ${why}. Raise leaseMs.`);
  throw configError(
    `createReceiver: storeTimeoutMs ${storeTimeoutMs} is too long for leaseMs ${leaseMs}: ${why}. Lower storeTimeoutMs under ${(leaseMs - heartbeatMs) / 2} ms, or raise leaseMs above ${3 * storeTimeoutMs} ms (3 × storeTimeoutMs).`,
  );
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
  const retentionMs = positive('retentionMs', options.retentionMs ?? DEFAULT_RETENTION_MS);
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
      'createReceiver: logger must have warn and error methods taking (fields, message), as pino and most loggers do, or be false to write no refusals or permanent failures.',
    );
  }
  const leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
  const storeTimeoutMs = storeTimeout(leaseMs, options.storeTimeoutMs);
  return {
    secrets,
    secretError,
    queue,
    logger: logger === false ? undefined : logger,
    consoleNotes: logger === undefined,
    completion: completionMode(options.completion),
    resolveSecret,
    store: options.store ?? memoryStore(),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes ?? 1_048_576),
    retentionMs,
    maxAgeMs,
    maxFutureSkewMs: positive('maxFutureSkewMs', options.maxFutureSkewMs ?? 300_000),
    leaseMs,
    deadlineMs,
    storeTimeoutMs,
    enqueueTimeoutMs: queue === undefined ? storeTimeoutMs : enqueueTimeoutMs(queue, storeTimeoutMs),
    maxRunMs: positive('maxRunMs', options.maxRunMs ?? 300_000),
    bodyTimeoutMs: positive('bodyTimeoutMs', options.bodyTimeoutMs ?? 10_000),
    namespace,
    now: options.now ?? Date.now,
  };
}
