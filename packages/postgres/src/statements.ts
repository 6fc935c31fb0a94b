/**
 * The SQL of the Postgres store, for one table. Every expiry is computed from statement_timestamp(),
 * the database's clock, so receivers with skewed clocks agree.
 *
 * Claims and completions come in two forms: one row (`$1` key, `$2` token, `$3` milliseconds), the
 * common case and the cheapest statement; and a batch (batchQueue: `$1`, `$2`, `$3` arrays of
 * distinct keys, tokens and milliseconds), for the operations that queued up while earlier statements
 * ran. A batch takes its row locks in one order, the keys' byte order (COLLATE "C"), and a one-row
 * statement holds a single lock, so no two statements, from any processes, can deadlock.
 *
 * A claim bounds its own row-lock waits: `set_config('lock_timeout', …, true)` runs inside it, before
 * its first row lock (a transaction-local setting, gone at the statement's implicit commit), so a row
 * held by a stray transaction fails the claim with SQLSTATE 55P03 instead of hanging it, at the cost of
 * one function call and no extra round trip. (`SET LOCAL` would need a transaction block;
 * `statement_timeout` is read when a statement starts, so it can only be set on the connection.)
 * Giving up is harmless for a claim: nothing ran yet. Completions, releases and extensions are not
 * bounded so: once the lock is free they record what the handlers did, even after the receiver's
 * `storeTimeoutMs` answered, where failing would leave a completed delivery to run again.
 */

// Milliseconds → interval, for durations past 2^31 ms too (float8 holds every integer up to 2^53).
const MS = (param: string): string => `(${param}::float8 * interval '1 millisecond')`;
const NOW = 'statement_timestamp()';
const after = (ms: string): string => `${NOW} + ${MS(ms)}`;

// A row is free to claim once its lease or retention ended (`expires_at`; a released row's is the
// release time) or it outlived `purge_at`. Its attempt count starts over when it is a completion whose
// retention ended, or a row old enough to have been pruned. A claim always returns its row: a
// conflicting row is locked, then rewritten either as our lease (when free) or as itself.
const FREE = `(r.expires_at <= ${NOW} OR r.purge_at <= ${NOW})`;
const FRESH = `(r.state = 'c' OR r.purge_at <= ${NOW})`;
const CLAIM_UPDATE = `ON CONFLICT (key) DO UPDATE SET
  state      = CASE WHEN ${FREE} THEN 'l' ELSE r.state END,
  token      = CASE WHEN ${FREE} THEN EXCLUDED.token ELSE r.token END,
  attempt    = CASE WHEN ${FREE} THEN (CASE WHEN ${FRESH} THEN 1 ELSE r.attempt + 1 END) ELSE r.attempt END,
  expires_at = CASE WHEN ${FREE} THEN EXCLUDED.expires_at ELSE r.expires_at END,
  purge_at   = CASE WHEN ${FREE} THEN EXCLUDED.purge_at ELSE r.purge_at END`;
/** The expression that, once evaluated, bounds the statement's lock waits; a no-op when `ms` is 0. */
const lockBound = (ms: number): string => (ms > 0 ? `set_config('lock_timeout', '${ms}', true)` : `''`);

const LEFT_MS = `ceil(extract(epoch FROM w.expires_at - ${NOW}) * 1000)::float8 AS left_ms`;

/**
 * Builds the statements for one table. `lockTimeoutMs` (a whole number, 0 for the server's setting)
 * bounds a claim's wait for a row lock.
 */
export function statements(table: string, lockTimeoutMs: number) {
  const bound = lockBound(lockTimeoutMs);
  // The claim is ours when our token and our lease end are on the returned row (a live lease of the
  // same token stays as it was, and is not ours again).
  const claimOne = `INSERT INTO ${table} AS r (key, state, token, attempt, expires_at, purge_at)
SELECT $1::text, 'l', $2::text, 1, ${after('$3')}, ${after('$3')} + ${MS('$4')} FROM (SELECT ${bound}) AS bound
${CLAIM_UPDATE}
RETURNING r.key, r.state, r.attempt,
  (r.token = $2::text AND r.expires_at = ${after('$3')}) AS mine,
  ${LEFT_MS.replace('w.', 'r.')}`;

  // i is computed row by row as the INSERT reads it: the bound is set before the first row is locked.
  const claimMany = `WITH i AS (SELECT i.*, ${bound} AS bound FROM unnest($1::text[], $2::text[], $3::float8[]) AS i(key, token, lease_ms)),
w AS (
  INSERT INTO ${table} AS r (key, state, token, attempt, expires_at, purge_at)
  SELECT i.key, 'l', i.token, 1, ${after('i.lease_ms')}, ${after('i.lease_ms')} + ${MS('$4')}
  FROM i ORDER BY i.key COLLATE "C"
  ${CLAIM_UPDATE}
  RETURNING r.key, r.state, r.attempt, r.token, r.expires_at
)
SELECT w.key, w.state, w.attempt, (w.token = i.token AND w.expires_at = ${after('i.lease_ms')}) AS mine, ${LEFT_MS}
FROM w JOIN i ON i.key = w.key`;

  // A lease belongs to its token until another claim takes it over (the claim writes its own token),
  // even once its end passed: an owner whose store call stalled past the lease can still complete,
  // release or extend it while nobody else claimed the delivery.
  const owned = `key = $1::text AND state = 'l' AND token = $2::text`;
  const update = (set: string): string => `UPDATE ${table} SET ${set} WHERE ${owned}`;
  const completeOne = update(`state = 'c', token = NULL, expires_at = ${after('$3')}, purge_at = ${after('$3')}`);

  // A batch of completions in two steps that never depend on the planner's idea of the table's size:
  // 1. each key is looked up by itself (LATERAL: one primary-key probe per key) in key order, and its
  //    row locked only while the token still owns the lease (re-checked on the latest version);
  // 2. those rows, locked by us and so certain to exist, are rewritten through ON CONFLICT, which finds
  //    each one through the primary key too: the insert itself never happens. (An UPDATE … FROM join
  //    can be planned as a hash join over the whole table; a plan cached while the table was small did
  //    exactly that, and cost more than everything else together.)
  const completeMany = `WITH o AS (
  SELECT i.key, i.token, i.retention_ms
  FROM (SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) AS u(key, token, retention_ms) ORDER BY key COLLATE "C") AS i,
  LATERAL (
    SELECT FROM ${table} r
    WHERE r.key = i.key AND r.state = 'l' AND r.token = i.token
    FOR UPDATE
  ) AS locked
)
INSERT INTO ${table} AS r (key, state, token, attempt, expires_at, purge_at)
SELECT o.key, 'c', o.token, 0, ${after('o.retention_ms')}, ${after('o.retention_ms')} FROM o
ON CONFLICT (key) DO UPDATE SET state = 'c', token = NULL, expires_at = EXCLUDED.expires_at, purge_at = EXCLUDED.purge_at
  WHERE r.state = 'l' AND r.token = EXCLUDED.token
RETURNING r.key`;

  return {
    claimOne,
    claimMany,
    completeOne,
    completeMany,
    release: update(`state = 'r', token = NULL, expires_at = ${NOW}, purge_at = ${NOW} + ${MS('$3')}`),
    extend: update(`expires_at = ${after('$3')}, purge_at = GREATEST(purge_at, ${after('$3')} + ${MS('$4')})`),
    // Never waits for a row lock (SKIP LOCKED: a row being claimed right now is left for next time),
    // so it is never part of a deadlock with a batch.
    prune: `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE purge_at <= ${NOW} FOR UPDATE SKIP LOCKED)`,
  };
}
