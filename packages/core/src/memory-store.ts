import { type ClaimResult, checkVersion, type IdempotencyStore } from './store';
import { flatKey } from './store-keys';
import { DEFAULT_RETENTION_MS, refuseRenamedOptions } from './store-checks';

/** Options of `memoryStore()`. */
export interface MemoryStoreOptions {
  /**
   * Most records kept (leases and completions). Past it the oldest record that is not a live lease is
   * evicted (a completion, a released record, an expired lease); a live lease never is. A full store
   * of live leases makes `claim` throw, which the receiver answers 503 (the service retries).
   * @default 1_000_000
   */
  maxEntries?: number;
  /**
   * How long a released record is remembered so the next claim's `attempt` keeps counting.
   * @default 259_200_000 (72 h)
   */
  keepMs?: number;
  /**
   * The store's clock, in milliseconds. Tests pass a fake one.
   * @default Date.now
   */
  now?: () => number;
}

/** A lease, or a released record (token `null`) kept for its attempt count. */
interface Lease {
  token: string | null;
  expiresAt: number;
  attempt: number;
}

/** A memory store (it answers synchronously, see `Awaitable`) plus what tests and dashboards want to see. */
export interface MemoryStore extends IdempotencyStore {
  readVersion(key: string): number | undefined;
  advanceVersion(key: string, version: number, retentionMs: number): boolean;
  claim(key: string, token: string, leaseMs: number): ClaimResult;
  complete(key: string, token: string, retentionMs: number): boolean;
  release(key: string, token: string): boolean;
  extend(key: string, token: string, leaseMs: number): boolean;
  /** Records currently held (leases, released and completed). */
  readonly size: number;
  /** Drops every record. */
  clear(): void;
}

const SWEEP_INTERVAL_MS = 60_000;
// The two answers that never vary, shared (and frozen) rather than made per claim: a retry of a
// completed delivery and a first claim are the two claims nearly every delivery makes.
const COMPLETED: ClaimResult = Object.freeze({ state: 'completed' });
const FIRST_CLAIM: ClaimResult = Object.freeze({ state: 'acquired', attempt: 1 });
// Completions are kept as small integers (seconds since the store was made) so a million of them
// fit in 85 bytes each (bench/src/stores/memory-bytes.ts): a Map entry of a string key and a V8 small integer.
const MAX_SECONDS = 2 ** 30;

/**
 * The embedded default store: atomic within one process, lazy expiry, bounded, timers unref'd.
 * For several processes use `@hookline/redis` or `@hookline/postgres`.
 *
 * @example
 * const receiver = createReceiver({ secret, store: memoryStore({ maxEntries: 100_000 }) });
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxEntries = options.maxEntries ?? 1_000_000;
  refuseRenamedOptions('memoryStore', options, { releasedTtlMs: 'keepMs' });
  const keepMs = options.keepMs ?? DEFAULT_RETENTION_MS;
  const now = options.now ?? Date.now;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`memoryStore: maxEntries must be a positive integer, got ${maxEntries}`);
  }
  const epoch = now();
  // One map, so a delivery costs two lookups and two writes: a key maps to its lease (or released
  // record) while it runs, then to its completion's expiry in whole seconds since `epoch`. Completing
  // overwrites the value in place, so insertion (claim) order stays close to expiry order, oldest first.
  const records = new Map<string, Lease | number>();

  // An expiry rounds up and "now" rounds down, so a completion is never forgotten before its retention.
  const expirySeconds = (ms: number): number => Math.min(MAX_SECONDS, Math.ceil((ms - epoch) / 1000));
  const elapsedSeconds = (ms: number): number => Math.floor((ms - epoch) / 1000);

  /** Whether a record can be dropped without losing anything a claim needs. */
  const expired = (record: Lease | number, at: number): boolean =>
    typeof record === 'number' ? record <= elapsedSeconds(at) : record.token === null && record.expiresAt <= at;

  // Ordering guards' version records: few (one per resource and guarded handler), kept apart from the
  // delivery records so the hot path's single map stays as it is.
  const versions = new Map<string, { version: number; expiresAt: number }>();

  function sweep(at: number): void {
    for (const [key, record] of versions) if (record.expiresAt <= at) versions.delete(key);
    for (const [key, record] of records) {
      if (expired(record, at)) records.delete(key);
      // Oldest first: the first completion still retained ends the pass (a rare longer retention or
      // released record behind it is caught lazily, by the next claim of its key or a later pass).
      else if (typeof record === 'number') break;
    }
  }

  const timer = setInterval(() => sweep(now()), SWEEP_INTERVAL_MS);
  (timer as { unref?: () => void }).unref?.();

  /** Evicts the oldest record that is not a live lease: a completion, a released record or an expired lease. */
  function makeRoom(at: number): void {
    if (records.size < maxEntries) return;
    for (const [key, record] of records) {
      if (typeof record === 'number' || record.token === null || record.expiresAt <= at) {
        records.delete(key);
        if (records.size < maxEntries) return;
      }
    }
    throw new Error(
      `memoryStore is full: ${records.size} deliveries are in progress (maxEntries ${maxEntries}); raise maxEntries or use a shared store`,
    );
  }

  /**
   * The record `token` still holds. Past its expiry too: a lapsed lease stays its owner's until another
   * claim takes it over (which replaces the token), so a handler that outlived a store stall can still
   * complete a delivery nobody else ran.
   */
  function ownedLease(key: string, token: string): Lease | undefined {
    const record = records.get(key);
    return typeof record === 'object' && record.token === token ? record : undefined;
  }

  return {
    readVersion(key) {
      const record = versions.get(key);
      if (record === undefined) return undefined;
      if (record.expiresAt <= now()) {
        versions.delete(key);
        return undefined;
      }
      return record.version;
    },
    advanceVersion(key, version, retentionMs) {
      // NaN compares false with everything: recorded, it would let every later version through.
      checkVersion(version, 'memoryStore');
      const at = now();
      const record = versions.get(key);
      if (record !== undefined && record.expiresAt > at && record.version >= version) return false;
      versions.set(key, { version, expiresAt: at + retentionMs });
      return true;
    },
    get size() {
      return records.size;
    },
    clear() {
      records.clear();
      versions.clear();
    },
    claim(key, token, leaseMs): ClaimResult {
      const at = now();
      const record = records.get(key);
      if (typeof record === 'object') {
        if (record.token !== null && record.expiresAt > at) {
          return { state: 'in_progress', retryAfterMs: record.expiresAt - at };
        }
        record.token = token;
        record.expiresAt = at + leaseMs;
        record.attempt += 1;
        return { state: 'acquired', attempt: record.attempt };
      }
      if (record !== undefined) {
        if (record > elapsedSeconds(at)) return COMPLETED;
        records.delete(key); // a forgotten completion: claimed afresh, at the end of the order
      }
      makeRoom(at);
      records.set(key, { token, expiresAt: at + leaseMs, attempt: 1 });
      return FIRST_CLAIM;
    },
    complete(key, token, retentionMs) {
      const at = now();
      if (ownedLease(key, token) === undefined) return false;
      // Kept for days: flat, whoever built the key (store-keys.ts).
      records.set(flatKey(key), expirySeconds(at + retentionMs));
      return true;
    },
    release(key, token) {
      const at = now();
      const lease = ownedLease(key, token);
      if (lease === undefined) return false;
      lease.token = null;
      lease.expiresAt = at + keepMs;
      return true;
    },
    extend(key, token, leaseMs) {
      const at = now();
      const lease = ownedLease(key, token);
      if (lease === undefined) return false;
      lease.expiresAt = at + leaseMs;
      return true;
    },
  };
}
