import { StoreDataError } from '@hookline/core/adapter';

// Node 20+ has String.prototype.isWellFormed (ES2024); the repository's lib setting predates it.
type MaybeWellFormed = string & { isWellFormed?: () => boolean };
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `text` has no lone surrogate, i.e. survives UTF-8 encoding unchanged. */
export function isWellFormed(text: string): boolean {
  const native = (text as MaybeWellFormed).isWellFormed;
  return native === undefined ? !LONE_SURROGATE.test(text) : native.call(text);
}

/**
 * The Redis key of a receiver key (`namespace + deliveryId`, e.g. `hookline:wdl_123`):
 * `<prefix><everything up to the last ':'>{<the rest>}`, so `hookline:{wdl_123}` by default.
 *
 * The braces are a Redis Cluster hash tag: each operation touches this one key, so any slot works,
 * and tagging the part after the namespace spreads deliveries over the slots. The mapping is
 * one-to-one: the tagged part holds no ':', so the last ':' before the '{' says where it starts.
 *
 * Redis keys are bytes and clients encode strings as UTF-8, which turns every lone surrogate into
 * U+FFFD: `wdl_X\ud800`, `wdl_X\udfff` and `wdl_X\ufffd` would share one record. Such a key is refused
 * with a StoreDataError (the receiver answers 500, not 503) instead.
 */
export function redisKey(prefix: string, key: string): string {
  if (!isWellFormed(key)) {
    throw new StoreDataError(
      `redisStore: the key ${JSON.stringify(key)} is not well-formed Unicode (a lone surrogate); Redis would store it lossily`,
    );
  }
  const cut = key.lastIndexOf(':') + 1;
  return `${prefix}${key.slice(0, cut)}{${key.slice(cut)}}`;
}
