// The four operations as Lua scripts: each one is a single atomic round trip (EVALSHA), and every
// expiry is computed from redis.call('TIME'), the server's clock, so receivers with skewed clocks agree.
//
// A record is one hash at KEYS[1]:
//   s = 'l' (lease) | 'r' (released) | 'c' (completed)
//   t = the lease owner's token (leases only)
//   e = the lease's expiry, in ms on the Redis clock (leases only)
//   a = the attempt count (claims of this key so far)
// The key's own TTL (PEXPIRE) is the retention of a completion, or, for leases and released records,
// the lease plus `keepMs`: how long the attempt count is remembered. A key that is gone is "no record".

const NOW = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

// Reads the record and decides whether ARGV[1] (the token) owns a live lease.
const OWNED = `
local rec = redis.call('HMGET', KEYS[1], 's', 't', 'e')
if rec[1] ~= 'l' or rec[2] ~= ARGV[1] or tonumber(rec[3]) <= now then return 0 end
`;

/** KEYS: record. ARGV: token, leaseMs, keepMs. Returns {0, attempt} | {1, retryAfterMs} | {2, 0}. */
export const CLAIM = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 's', 'e', 'a')
if rec[1] == 'c' then return {2, 0} end
if rec[1] == 'l' then
  local left = tonumber(rec[2]) - now
  if left > 0 then return {1, left} end
end
local attempt = (tonumber(rec[3]) or 0) + 1
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 's', 'l', 't', ARGV[1], 'e', string.format('%d', now + lease), 'a', attempt)
redis.call('PEXPIRE', KEYS[1], string.format('%d', lease + tonumber(ARGV[3])))
return {0, attempt}
`;

/** KEYS: record. ARGV: token, retentionMs. Returns 1 when completed, 0 when the token lost the lease. */
export const COMPLETE = `${NOW}${OWNED}
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'c')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: record. ARGV: token, keepMs. Returns 1 when released, 0 when the token lost the lease. */
export const RELEASE = `${NOW}${OWNED}
redis.call('HSET', KEYS[1], 's', 'r')
redis.call('HDEL', KEYS[1], 't', 'e')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: record. ARGV: token, leaseMs, keepMs. Returns 1 when extended, 0 when the token lost the lease. */
export const EXTEND = `${NOW}${OWNED}
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'e', string.format('%d', now + lease))
redis.call('PEXPIRE', KEYS[1], string.format('%d', lease + tonumber(ARGV[3])))
return 1
`;
