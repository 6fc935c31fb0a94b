// Version records for ordering guards (`receiver.on(…, { order })`): one string per resource and
// guarded handler, holding the highest version processed, kept for the retention on the Redis clock
// (PX). Each script touches one key, so it runs on any Redis Cluster node.
import { checkVersion, positiveMs, wellFormedKey } from '@hookline/core/adapter';
import { loadScript, type ScriptRunner } from './redis-client';

/**
 * The Redis key of a version record: `<prefix>{v:<key>}`. The receiver names version records
 * `<namespace>order:<handler>:<resource>:version`, so redis-key.ts's tag (the part after the last ':')
 * would put every one of them in the slot of `{version}`; tagging the whole key spreads resources
 * over the slots instead. The tag is never empty (it starts with `v:`), so Redis and the clients'
 * slot function agree on it, and the mapping is one-to-one.
 */
export function versionKey(prefix: string, key: string): string {
  return `${prefix}{v:${wellFormedKey('redisStore', key)}}`;
}

/** KEYS: version record. Returns the recorded version as a string, or nil. */
export const READ_VERSION = `return redis.call('GET', KEYS[1])`;

/**
 * KEYS: version record. ARGV: version, retentionMs. Compare-and-set, never backwards: writes ARGV[1]
 * when no version is recorded (or it expired: the key is gone) or the recorded one is lower. Returns
 * 1 when it advanced, 0 otherwise. Both sides are compared as Lua numbers (doubles), the same values
 * JavaScript sent: `String(version)` reads back as the same double.
 */
export const ADVANCE_VERSION = `
local current = redis.call('GET', KEYS[1])
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

const SCRIPTS = { read: loadScript(READ_VERSION), advance: loadScript(ADVANCE_VERSION) };

const checkRetention = (retentionMs: number): string => String(Math.ceil(positiveMs('redisStore', 'retentionMs', retentionMs)));

/** `readVersion` and `advanceVersion` of a Redis store, over its script runner and key prefix. */
export function versionRecords(run: ScriptRunner, prefix: string) {
  return {
    async readVersion(key: string): Promise<number | undefined> {
      const reply = await run(SCRIPTS.read, versionKey(prefix, key), []);
      if (reply === null || reply === undefined) return undefined;
      const version = Number(reply);
      if (!Number.isFinite(version))
        throw new Error(`redisStore: the version record of ${JSON.stringify(key)} holds ${JSON.stringify(reply)}`);
      return version;
    },
    async advanceVersion(key: string, version: number, retentionMs: number): Promise<boolean> {
      const args = [String(checkVersion(version, 'redisStore')), checkRetention(retentionMs)];
      return Number(await run(SCRIPTS.advance, versionKey(prefix, key), args)) === 1;
    },
  };
}
