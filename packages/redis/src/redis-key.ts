import { wellFormedKey } from '@hookline/core/adapter';

/**
 * The Redis key of a receiver key (`namespace + deliveryId`, e.g. `hookline:wdl_123`):
 * `<prefix><everything up to the last ':'>{<the rest>}`, so `hookline:{wdl_123}` by default.
 *
 * The braces are a Redis Cluster hash tag: each operation touches this one key, so any slot works,
 * and tagging the part after the namespace spreads deliveries over the slots. Redis takes the slot
 * from the text between a key's first '{' and the next '}', and hashes the whole key when that text
 * is empty, where the clients' slot function (cluster-key-slot, in node-redis and ioredis) reads on
 * to the next '}': they disagree, and every command on such a key is answered MOVED. So the tag must
 * be the key's first '{' and what it holds must not start with '}'. A key where that cannot be (a
 * '{' before its last ':', or nothing or a '}' after it) is stored as `<prefix>{:}<key>` instead:
 * all such keys share one slot, and no key of the first form looks like one (what follows a first
 * form's brace holds no ':'). Both forms keep distinct keys distinct.
 *
 * Redis keys are bytes and clients encode strings as UTF-8, which turns every lone surrogate into
 * U+FFFD: `wdl_X\ud800`, `wdl_X\udfff` and `wdl_X\ufffd` would share one record. Such a key is refused
 * with a StoreDataError (the receiver answers 500, not 503) instead.
 */
export function redisKey(prefix: string, key: string): string {
  wellFormedKey('redisStore', key);
  const cut = key.lastIndexOf(':') + 1;
  const head = key.slice(0, cut);
  const tail = key.slice(cut);
  if (tail === '' || tail.startsWith('}') || head.includes('{')) return `${prefix}{:}${key}`;
  return `${prefix}${head}{${tail}}`;
}

/** Refuses a prefix holding a brace: it would come before the store's hash tag and decide the slot. */
export function checkPrefix(prefix: string): string {
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new RangeError(
      `redisStore: prefix ${JSON.stringify(prefix)} must be a string without '{' or '}' (a brace there would decide the Redis Cluster slot)`,
    );
  }
  return prefix;
}
