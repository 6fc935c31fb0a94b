/** `createReceiver()`'s options as an application writes them; resolve-options.ts applies their defaults and checks. */
import type { EventMap, ServiceEvents } from './events';
import type { ReceiverHooks } from './hooks';
import type { DeliveryQueue } from './queue';
import type { ReceiverLogger } from './logger';
import type { SecretResolver, SecretValue } from './secrets';
import type { IdempotencyStore } from './store';

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
   * Answer-fast mode: verify the delivery and enqueue it on this queue (`@hookline/bullmq`,
   * `@hookline/pg-boss`), whose idempotent enqueue is the receipt, answer 202, and run the handlers in
   * workers started with `receiver.work()` (each job claimed in the store there).
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
   * A pino-style logger (`warn/error(fields, message)`): one structured line per refusal and
   * `PermanentFailure` (`warn`), handler failure and lease loss (`error`). With neither a logger nor an
   * `onError` listener, errors go to `console.error` (a store's or a queue's as one line: class, code,
   * message). Without a logger, the refusals that point at a set-up mistake (401, 400, 413, 408, 405,
   * 404, 500 CONFIGURATION_ERROR) and the handlers' permanent failures go to `console.warn`: the first
   * of each kind with its likely cause, then a count of the repeats at most once a minute. `false`
   * writes no refusal and no permanent failure at all (errors still go to `onError` or
   * `console.error`). A logger that throws changes no answer: its failure is noted on `console.error`.
   * @default undefined (refusals and permanent failures noted on `console.warn`, errors on `console.error`)
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
   * 30 s so the answer is prompt even when the store hangs. It must leave the leases room:
   * `2 × storeTimeoutMs + leaseMs / 3 < leaseMs` (a lease taken by a call that answers only at its limit
   * must still be live when its next renewal lands), or `createReceiver` throws.
   * @default 5_000, or `leaseMs / 4` when that is shorter
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
