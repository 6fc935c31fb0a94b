/**
 * The SQL of the SQLite store, for one table: one statement per operation, positional `?` parameters.
 * Times are milliseconds since the epoch from the process clock, which every process on the machine
 * shares; the caller binds "now" so one statement sees one instant.
 */
export function statements(table: string) {
  // A row is free to claim once its lease or retention ended (a released row's `expires_at` is the
  // release time); `purge_at` is never before `expires_at`. Its attempt count starts over when it is
  // a completion whose retention ended, or a row old enough to have been pruned.
  return {
    /** key, token, lease end, purge time, now, now → `{ attempt }` when acquired, no row otherwise. */
    claim: `INSERT INTO ${table} (key, state, token, attempt, expires_at, purge_at) VALUES (?, 'l', ?, 1, ?, ?)
ON CONFLICT (key) DO UPDATE SET
  attempt    = CASE WHEN state = 'c' OR purge_at <= ? THEN 1 ELSE attempt + 1 END,
  state      = 'l',
  token      = excluded.token,
  expires_at = excluded.expires_at,
  purge_at   = excluded.purge_at
WHERE expires_at <= ?
RETURNING attempt`,
    /** key → `{ state, expires_at }`: why a claim got no row. */
    read: `SELECT state, expires_at FROM ${table} WHERE key = ?`,
    /**
     * retention end, retention end, key, token → 1 change when the token still held the lease. The
     * claim's `purge_at` stays when it is later than the retention's end (by at most the lease, with
     * the defaults): `prune()` deletes the row then.
     */
    complete: `UPDATE ${table} SET state = 'c', token = NULL, expires_at = ?, purge_at = max(purge_at, ?) WHERE key = ? AND state = 'l' AND token = ?`,
    /** now, purge time, key, token. */
    release: `UPDATE ${table} SET state = 'r', token = NULL, expires_at = ?, purge_at = ? WHERE key = ? AND state = 'l' AND token = ?`,
    /** lease end, purge time, key, token. */
    extend: `UPDATE ${table} SET expires_at = ?, purge_at = max(purge_at, ?) WHERE key = ? AND state = 'l' AND token = ?`,
    /** from key, chunk size → `{ last }`: the last key of the next chunk of the primary key (a read). */
    chunkEnd: `SELECT max(key) AS last FROM (SELECT key FROM ${table} WHERE key >= ? ORDER BY key LIMIT ?)`,
    /** from key, to key, now: deletes the chunk's rows nothing needs any more (one short write). */
    prune: `DELETE FROM ${table} WHERE key >= ? AND key <= ? AND purge_at <= ?`,
  };
}
