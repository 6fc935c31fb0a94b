import type { Awaitable } from './awaitable';

export type { Awaitable } from './awaitable';

/** The answer of `IdempotencyStore.claim`. */
export type ClaimResult =
  /** The caller now holds the lease for its token; `attempt` counts the claims of this key, this one included. */
  | { state: 'acquired'; attempt: number }
  /** Another claimer holds a live lease; ask again in `retryAfterMs`. */
  | { state: 'in_progress'; retryAfterMs: number }
  /** The key was completed and is still retained: a duplicate. */
  | { state: 'completed' };

/** What `transaction()` completes with the work: the delivery's key for its token, and with an ordering guard the version record. */
export interface TransactionCompletion {
  key: string;
  token: string;
  retentionMs: number;
  version?: { key: string; version: number; retentionMs: number };
}

/**
 * Where the receiver remembers deliveries (docs/ARCHITECTURE.md, "The store contract"). Implementations must make
 * `claim` atomic, measure expiry on their own clock, and throw (or reject) on backend errors, never
 * turning one into a state (a `StoreDataError` for data the backend refuses, a `StoreNotSetUpError` for
 * a table or binding that is missing). A store may answer synchronously (the memory store does, which keeps the
 * receiver's hot path free of promise turns); callers must accept both. `@hookline/testing/conformance`
 * exports the conformance suite every store must pass.
 */
export interface IdempotencyStore {
  /**
   * Atomically: no record, a released record, or an expired lease ⇒ take a lease of `leaseMs` for
   * `token` (`acquired`); a live lease ⇒ `in_progress`; a retained completion ⇒ `completed`.
   */
  claim(key: string, token: string, leaseMs: number): Awaitable<ClaimResult>;
  /** Marks the key completed for `retentionMs`, only if `token` still owns the lease. */
  complete(key: string, token: string, retentionMs: number): Awaitable<boolean>;
  /** Gives the lease up so the next attempt can claim at once, only if `token` still owns it. */
  release(key: string, token: string): Awaitable<boolean>;
  /** Heartbeat: pushes the lease's expiry to now + `leaseMs`, only if `token` still owns it. */
  extend(key: string, token: string, leaseMs: number): Awaitable<boolean>;
  /**
   * Optional, for ordering guards (`on(…, { order })`): the version recorded for `key`, `undefined`
   * when none is (or it expired).
   */
  readVersion?(key: string): Awaitable<number | undefined>;
  /**
   * Optional, for ordering guards: atomically records `version` for `key` when none is recorded or the
   * recorded one is lower (compare-and-set, never backwards), kept for `retentionMs`. Answers whether
   * it advanced. A `version` that is not a finite number is refused with a `StoreDataError` (thrown or
   * rejected) and nothing is recorded: `checkVersion` from `@hookline/core/adapter` does it.
   */
  advanceVersion?(key: string, version: number, retentionMs: number): Awaitable<boolean>;
  /**
   * Optional, for transactional handlers (`on(…, { transactional: true })`): runs `work` with a
   * transaction of the store's database, then completes `completion.key` for its token in the same
   * transaction and commits. With `completion.version` (a transactional handler with an ordering
   * guard) the version record is advanced in that transaction too (as `advanceVersion` would), so no
   * crash leaves a completed handler with an unadvanced version. Rolls everything back when `work`
   * throws (rethrown) or when the token no longer holds the key (`completed: false`: another attempt
   * may be running the delivery).
   */
  transaction?<T>(work: (transaction: unknown) => Promise<T>, completion: TransactionCompletion): Promise<{ value: T; completed: boolean }>;
}

/**
 * A store over the network that keeps version records (ordering guards): `IdempotencyStore` with both
 * version methods given and asynchronous. A store's own type extends it (`interface PostgresStore
 * extends VersionedStore`), so their signatures are written once.
 */
export interface VersionedStore extends IdempotencyStore {
  readVersion(key: string): Promise<number | undefined>;
  advanceVersion(key: string, version: number, retentionMs: number): Promise<boolean>;
}

export { isPromiseLike } from './awaitable';

const STORE_DATA_ERROR = Symbol.for('hookline.store-data-error');

/**
 * Thrown (or rejected with) by a store when the backend refused the data itself (a key it cannot
 * encode or index, say) rather than being unreachable. The receiver answers it 500 INTERNAL_ERROR
 * with the reason `store_data_error`, never 503 "store unavailable": it is a bug to fix, not an outage
 * to wait out.
 */
export class StoreDataError extends Error {
  readonly [STORE_DATA_ERROR] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreDataError';
  }

  /** True for a StoreDataError from any copy of the package. */
  static is(value: unknown): value is StoreDataError {
    return typeof value === 'object' && value !== null && (value as { [STORE_DATA_ERROR]?: unknown })[STORE_DATA_ERROR] === true;
  }
}

const STORE_NOT_SET_UP = Symbol.for('hookline.store-not-set-up-error');

/**
 * Thrown (or rejected with) by a store whose backend lacks what the store needs and cannot make on
 * its own: a table or schema nobody created (`setup()` not run, a migration not applied), a database
 * that does not exist, a binding the platform was not given. Each store recognises its own driver's
 * answer (PostgreSQL 42P01/3F000, MySQL ER_NO_SUCH_TABLE/ER_BAD_DB_ERROR, SQLite "no such table",
 * DynamoDB ResourceNotFoundException, a Durable Object binding that is missing or of another class)
 * and says in the message what to do (`await store.setup()`). The receiver answers 500
 * CONFIGURATION_ERROR with the reason `store_not_set_up`, not 503 "store unavailable": no retry can
 * succeed until someone fixes the deployment, and the message says how. Without a `logger` it is
 * written to `console.warn` once (then counted once a minute), not as a driver error per delivery.
 */
export class StoreNotSetUpError extends Error {
  readonly [STORE_NOT_SET_UP] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreNotSetUpError';
  }

  /** True for a StoreNotSetUpError from any copy of the package. */
  static is(value: unknown): value is StoreNotSetUpError {
    return typeof value === 'object' && value !== null && (value as { [STORE_NOT_SET_UP]?: unknown })[STORE_NOT_SET_UP] === true;
  }
}

/**
 * Refuses a version an ordering guard could not compare (NaN, ±Infinity, not a number) the way every
 * store must: a `StoreDataError`, before anything is written. The receiver checks versions before a
 * handler runs, so a store only meets one from a caller of its own.
 */
export function checkVersion(version: unknown, store: string): number {
  if (typeof version === 'number' && Number.isFinite(version)) return version;
  throw new StoreDataError(`${store}: a version must be a finite number, got ${describeVersion(version)}`);
}

function describeVersion(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
