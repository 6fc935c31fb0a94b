// The four operations as Lua scripts: each one is a single atomic round trip (EVALSHA). Lease ends
// are computed from redis.call('TIME'), the server's clock, so receivers with skewed clocks agree.
//
// A record is one string at KEYS[1], whose first character says what it is:
//   'l:<attempt>:<expiry>:<token>'  a lease: its owner's token, its expiry in ms on the Redis clock
//   'r:<attempt>'                   released: only the attempt count is kept
//   'c'                             completed
// The key's own TTL (PX) is the retention of a completion, or, for leases and released records, the
// lease plus `keepMs`: how long the attempt count is remembered. A key that is gone is "no record".
// One GET and one SET per script: a hash took up to four commands (HMGET, DEL, HSET, PEXPIRE), and on
// a machine where Redis shares the cores with the receivers that was a third of a delivery's cost.

// Redis before 5 refuses writes after TIME unless the script's effects are replicated; later ones do
// that always (and Redis 7 dropped the switch), so the call is guarded. Only the scripts that write a
// lease end read the clock: complete and release never need it.
const NOW = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

// Reads the record; returns 0 unless it is a lease held by ARGV[1] (the token). A lease whose end
// passed still belongs to its token until another claim takes it over (that claim writes its own
// token): an owner whose store call stalled past the lease can still complete what it ran. The token
// is last in the record, so it may hold any character.
const OWNED = `
local rec = redis.call('GET', KEYS[1])
if not rec then return 0 end
local attempt, token = string.match(rec, '^l:(%d+):%d+:(.*)$')
if token ~= ARGV[1] then return 0 end
`;

/** KEYS: record. ARGV: token, leaseMs, keepMs. Returns {0, attempt} | {1, retryAfterMs} | {2, 0}. */
export const CLAIM = `${NOW}
local rec = redis.call('GET', KEYS[1])
local attempt = 1
if rec then
  local kind = string.sub(rec, 1, 1)
  if kind == 'c' then return {2, 0} end
  local count, expiry = string.match(rec, '^.:(%d+):?(%d*)')
  if kind == 'l' then
    local left = tonumber(expiry) - now
    if left > 0 then return {1, left} end
  end
  attempt = tonumber(count) + 1
end
local lease = tonumber(ARGV[2])
redis.call('SET', KEYS[1], 'l:' .. attempt .. ':' .. string.format('%d', now + lease) .. ':' .. ARGV[1],
  'PX', string.format('%d', lease + tonumber(ARGV[3])))
return {0, attempt}
`;

/** KEYS: record. ARGV: token, retentionMs. Returns 1 when completed, 0 when the token lost the lease. */
export const COMPLETE = `${OWNED}
redis.call('SET', KEYS[1], 'c', 'PX', ARGV[2])
return 1
`;

/** KEYS: record. ARGV: token, keepMs. Returns 1 when released, 0 when the token lost the lease. */
export const RELEASE = `${OWNED}
redis.call('SET', KEYS[1], 'r:' .. attempt, 'PX', ARGV[2])
return 1
`;

/** KEYS: record. ARGV: token, leaseMs, keepMs. Returns 1 when extended, 0 when the token lost the lease. */
export const EXTEND = `${NOW}${OWNED}
local lease = tonumber(ARGV[2])
redis.call('SET', KEYS[1], 'l:' .. attempt .. ':' .. string.format('%d', now + lease) .. ':' .. ARGV[1],
  'PX', string.format('%d', lease + tonumber(ARGV[3])))
return 1
`;
