/**
 * The checks every store makes on what it is given, written once: durations in milliseconds, keys a
 * database holding UTF-8 can store as themselves, and the default retention.
 */
import { StoreDataError } from './store';

/**
 * The receiver's default retention (72 h; the service's last retry comes about 31 h after the first
 * attempt), and the default of what is kept that long: a store's records after their lease, so that
 * a later claim's `attempt` keeps counting, and a queue's completed jobs.
 */
export const DEFAULT_RETENTION_MS = 72 * 3_600_000;

/**
 * `value` when it is a positive, finite number of milliseconds; otherwise a RangeError naming the
 * store (or adapter) and the option, e.g. `redisStore: keepMs must be a positive number of
 * milliseconds, got 0`.
 */
export function positiveMs(owner: string, name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${owner}: ${name} must be a positive number of milliseconds, got ${value}`);
  }
  return value;
}

// With the `u` flag a surrogate pair is one code point, so this matches only a lone surrogate.
const LONE_SURROGATE = /\p{Cs}/u;
// Node 20+ has String.prototype.isWellFormed (ES2024, faster than the expression); the repository's
// lib setting predates it.
type MaybeWellFormed = string & { isWellFormed?: () => boolean };

/** Whether `text` has no lone surrogate, i.e. survives UTF-8 encoding unchanged. */
export function isWellFormed(text: string): boolean {
  const native = (text as MaybeWellFormed).isWellFormed;
  return native === undefined ? !LONE_SURROGATE.test(text) : native.call(text);
}

/**
 * `key` when a store that encodes strings as UTF-8 can hold it as itself; otherwise a StoreDataError
 * (the receiver answers 500, not 503). UTF-8 turns every lone surrogate into U+FFFD, so `wdl_X\ud800`,
 * `wdl_X\udfff` and `wdl_X\ufffd` would share one record. `what` names the value in the message.
 */
export function wellFormedKey(owner: string, key: string, what = 'key'): string {
  if (typeof key !== 'string' || !isWellFormed(key)) {
    throw new StoreDataError(
      `${owner}: the ${what} ${JSON.stringify(key)} is not well-formed Unicode (a lone surrogate); it would be stored lossily`,
    );
  }
  return key;
}

/**
 * What an old option became: its new name, or the new name and a note on what changed with it (how a
 * count is now counted, say).
 */
export type RenamedOption = string | { to: string; note: string };

/**
 * A TypeError when `options` still uses a name a store's or queue's options no longer have (JavaScript
 * callers get no compile error), e.g. `postgresStore: \`pool\` is now \`client\``. `renames` maps
 * old to new; an old name with dots is looked up inside the options (`worker.maxStalledCount`), and a
 * note follows the new name: `` `maxRetries` is now `attempts`, which counts every try ``.
 */
export function refuseRenamedOptions(owner: string, options: object, renames: Record<string, RenamedOption>): void {
  for (const [old, now] of Object.entries(renames)) {
    if (!isGiven(options, old.split('.'))) continue;
    const [to, note] = typeof now === 'string' ? [now, ''] : [now.to, `, ${now.note}`];
    throw new TypeError(`${owner}: \`${old}\` is now \`${to}\`${note}`);
  }
}

function isGiven(options: unknown, path: string[]): boolean {
  let at = options;
  for (const name of path) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, name)) return false;
    at = (at as Record<string, unknown>)[name];
  }
  return true;
}
