import type { ClaimResult } from '@hookline/core';
import { DEFAULT_RETENTION_MS, positiveMs, type VersionedStore } from '@hookline/core/adapter';
import { loadScript, scriptRunner, type RedisClientLike } from './redis-client';
import { checkPrefix, redisKey } from './redis-key';
import { CLAIM, COMPLETE, EXTEND, RELEASE } from './scripts';
import { versionRecords } from './versions';

/** Options of `redisStore()`. */
export interface RedisStoreOptions {
  /**
   * A connected node-redis v5 client (`createClient()`, `createCluster()`) or ioredis v5 client
   * (`new Redis()`, `new Cluster()`). The store never connects, quits or reconfigures it.
   */
  client: RedisClientLike;
  /**
   * Prepended to every Redis key. The receiver's keys already start with its `namespace` (default
   * `hookline:`), so a delivery is stored at `<prefix><namespace>{<deliveryId>}`: `hookline:{wdl_…}`
   * with both defaults. The braces are a Redis Cluster hash tag (one key per delivery, one slot).
   * @default '' (the receiver's namespace is the prefix)
   */
  prefix?: string;
  /**
   * How long a lease or released record outlives its lease, so a later claim's `attempt` keeps
   * counting (the service's last retry comes about 31 h after the first).
   * @default 259_200_000 (72 h)
   */
  keepMs?: number;
}

/** A Redis store: Redis expires its keys, so there is nothing to set up, prune or close. */
export type RedisStore = VersionedStore;

const SCRIPTS = {
  claim: loadScript(CLAIM),
  complete: loadScript(COMPLETE),
  release: loadScript(RELEASE),
  extend: loadScript(EXTEND),
};

/** Whole milliseconds, at least 1: Redis's PEXPIRE takes a positive integer. */
const ms = (name: string, value: number): string => String(Math.ceil(positiveMs('redisStore', name, value)));

/** The integer pair the claim script answers; anything else means the server is not what we think. */
function claimResult(reply: unknown): ClaimResult {
  if (Array.isArray(reply) && reply.length === 2) {
    const [state, value] = reply.map(Number) as [number, number];
    if (state === 0) return { state: 'acquired', attempt: value };
    if (state === 1) return { state: 'in_progress', retryAfterMs: value };
    if (state === 2) return { state: 'completed' };
  }
  throw new Error(`redisStore: unexpected reply to the claim script: ${JSON.stringify(reply)}`);
}

/**
 * An idempotency store in Redis, shared by every receiver process that uses the same Redis and
 * prefix. One Lua script call (one round trip) per operation, every expiry on the Redis server's
 * clock, keys hash-tagged for Redis Cluster. Redis errors reject the operation's promise, which the
 * receiver answers 503 (the service retries); a key Redis cannot hold faithfully (not well-formed
 * Unicode) rejects with a `StoreDataError` (answered 500: retrying cannot help).
 *
 * @example
 * import { createClient } from 'redis';
 * import { createReceiver } from '@hookline/core';
 * import { redisStore } from '@hookline/redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET!, store: redisStore({ client }) });
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  const run = scriptRunner(options.client);
  const prefix = checkPrefix(options.prefix ?? '');
  const keep = ms('keepMs', options.keepMs ?? DEFAULT_RETENTION_MS);

  return {
    async claim(key, token, leaseMs) {
      return claimResult(await run(SCRIPTS.claim, redisKey(prefix, key), [token, ms('leaseMs', leaseMs), keep]));
    },
    async complete(key, token, retentionMs) {
      return Number(await run(SCRIPTS.complete, redisKey(prefix, key), [token, ms('retentionMs', retentionMs)])) === 1;
    },
    async release(key, token) {
      return Number(await run(SCRIPTS.release, redisKey(prefix, key), [token, keep])) === 1;
    },
    async extend(key, token, leaseMs) {
      return Number(await run(SCRIPTS.extend, redisKey(prefix, key), [token, ms('leaseMs', leaseMs), keep])) === 1;
    },
    // Ordering guards' version records (versions.ts).
    ...versionRecords(run, prefix),
  };
}
