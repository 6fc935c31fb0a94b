/**
 * The SQL of the MySQL store, for one table. Every time is milliseconds since the epoch on the
 * database's clock: UTC_TIMESTAMP(3) is fixed for the whole statement, and counted from the epoch in
 * UTC, so neither the session's time zone nor a daylight-saving change moves it.
 */
const NOW = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000)";
const after = (param = '?'): string => `(${NOW} + ${param})`;

/**
 * What a claim found, packed into one integer the statement hands back as LAST_INSERT_ID (MySQL's
 * INSERT has no RETURNING): `1 + 4 × attempt` acquired, `2 + 4 × ms left` a live lease, `3` completed.
 */
export const OUTCOME = { acquired: 1, inProgress: 2, completed: 3 } as const;

const list = (n: number, item: string): string => Array.from({ length: n }, () => item).join(', ');

/**
 * Most claims in one statement: its answer has a bit per claim and must stay an exact integer in a
 * JavaScript number (below 2^53), whatever the pool's `supportBigNumbers`.
 */
export const MAX_CLAIM_BATCH = 50;

/** Most rows one prune statement deletes. */
export const PRUNE_CHUNK = 5_000;

/** Builds the statements for one table. */
export function statements(table: string) {
  // In ON DUPLICATE KEY UPDATE, MySQL and MariaDB assign left to right and each assignment sees the
  // columns already assigned. So every condition reads `expires_at`, assigned last, and `attempt`,
  // assigned first, reads `state` and `purge_at` before they change. A row is free once its lease or
  // retention ended (a released row's `expires_at` is the release time; `purge_at` is never earlier).
  // Its attempt count starts over when it is a completion whose retention ended, or a row old enough
  // to have been pruned. The first assignment always calls LAST_INSERT_ID(outcome): the last call in
  // the statement is what the client receives as insertId, and the VALUES row's call is the outcome
  // of a fresh insert.
  const FREE = `expires_at <= ${NOW}`;
  const NEXT_ATTEMPT = `IF(state = 'c' OR purge_at <= ${NOW}, 1, attempt + 1)`;
  const claim = `INSERT INTO ${table} (k, state, token, attempt, expires_at, purge_at)
VALUES (?, 'l', ?, LAST_INSERT_ID(${OUTCOME.acquired} + 4) DIV 4, ${after()}, ${after()})
ON DUPLICATE KEY UPDATE
  attempt    = IF(${FREE},
                  LAST_INSERT_ID(${OUTCOME.acquired} + 4 * ${NEXT_ATTEMPT}) DIV 4,
                  IF(LAST_INSERT_ID(IF(state = 'c', ${OUTCOME.completed}, ${OUTCOME.inProgress} + 4 * (expires_at - ${NOW}))) > 0, attempt, attempt)),
  token      = IF(${FREE}, ?, token),
  state      = IF(${FREE}, 'l', state),
  purge_at   = IF(${FREE}, ${after()}, purge_at),
  expires_at = IF(${FREE}, ${after()}, expires_at)`;

  // Claims that queued up, one statement and one commit for all. Only a brand-new key is taken here:
  // a row that exists is left exactly as it was (its assignment changes nothing), and its claim is then
  // sent alone as `claim`, which answers it exactly as it would have been answered by itself. Which rows
  // were inserted comes back as one integer through LAST_INSERT_ID, a bit per row, the first row's
  // the highest: rows are written one after the other, each row's VALUES shifts the bits left and sets
  // a 1 (the first row starts from 1, not from the connection's last value), and the duplicate
  // assignment of that same row, which runs before the next row's VALUES, takes the 1 back.
  const inserted = `IF(LAST_INSERT_ID(LAST_INSERT_ID() * 2 + 1) > 0, 1, 1)`;
  const claimRow = (attempt: string) => `(?, 'l', ?, ${attempt}, ${after()}, ${after()})`;
  const claimMany = (n: number) => `INSERT INTO ${table} (k, state, token, attempt, expires_at, purge_at)
VALUES ${[claimRow('LAST_INSERT_ID(1)'), ...Array.from({ length: n - 1 }, () => claimRow(inserted))].join(',\n       ')}
ON DUPLICATE KEY UPDATE attempt = IF(LAST_INSERT_ID(LAST_INSERT_ID() - 1) >= 0, attempt, attempt)`;

  // The owner keeps its rights while the row still holds its token, past the lease's end too: only
  // another claim (which replaces the token) or a completion or release takes them away.
  const owned = `k = ? AND state = 'l' AND token = ?`;
  return {
    /** key, token, lease, lease + keep, token, lease + keep, lease → insertId: the outcome. */
    claim,
    /**
     * `n` claims with one lease, of distinct keys in key order (a copy of the last row may follow, as
     * padding): key, token, lease, lease + keep for each → insertId: bit `n - 1 - i` set when row `i`
     * was inserted (acquired, attempt 1); the others, and every copy, are untouched.
     */
    claimMany,
    /**
     * Completions that queued up, one statement and one commit for all (`n` keys, one retention; a
     * key repeated, as padding, matches its row once): marker, retention, retention, n keys, n
     * key/token pairs. Each completed row keeps the batch's marker as its token, so when fewer rows
     * changed than were asked for, a read of `completedBy` says which.
     */
    completeMany: (n: number) =>
      `UPDATE ${table} SET state = 'c', token = ?, expires_at = ${after()}, purge_at = GREATEST(purge_at, ${after()})
WHERE state = 'l' AND k IN (${list(n, '?')}) AND (k, token) IN (${list(n, '(?, ?)')})`,
    /** marker, n keys → the keys this batch completed. */
    completedBy: (n: number) => `SELECT k FROM ${table} WHERE k IN (${list(n, '?')}) AND state = 'c' AND token = ?`,
    /** retention, retention, key, token. */
    complete: `UPDATE ${table} SET state = 'c', token = NULL, expires_at = ${after()}, purge_at = GREATEST(purge_at, ${after()}) WHERE ${owned}`,
    /** keep, key, token. */
    release: `UPDATE ${table} SET state = 'r', token = NULL, expires_at = ${NOW}, purge_at = ${after()} WHERE ${owned}`,
    /** lease + keep, lease, key, token. */
    extend: `UPDATE ${table} SET purge_at = GREATEST(purge_at, ${after()}), expires_at = ${after()} WHERE ${owned}`,
    /** One chunk of the rows nothing needs any more, so no claim waits long behind it. */
    prune: `DELETE FROM ${table} WHERE purge_at <= ${NOW} ORDER BY purge_at LIMIT ${PRUNE_CHUNK}`,
  };
}
