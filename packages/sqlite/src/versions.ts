// Version records for ordering guards (`receiver.on(…, { order })`), in a table of their own beside the
// store's (`<table>_versions`), created the first time a guard uses it: one row per resource and
// guarded handler, its highest version processed (a REAL: the JavaScript number, compared exactly),
// kept until `expires_at` (milliseconds since the epoch, the process clock, as the store's other times).
import { checkVersion, positiveMs } from '@hookline/core/adapter';
import type { SqliteDatabaseLike, SqliteStatementLike, SqliteValue } from './database';
import { quoteIdentifier } from './schema';

const PRUNE_CHUNK = 5_000;

/**
 * The DDL of the version table beside `table` (an unquoted name). No index beyond the primary key, as
 * the store's own table: an advance writes one page, and `prune()` walks the keys in chunks.
 */
export function versionsSchemaSql(table: string): string {
  const quoted = quoteIdentifier(`${table}_versions`);
  return `CREATE TABLE IF NOT EXISTS ${quoted} (
  key        TEXT    NOT NULL PRIMARY KEY,
  version    REAL    NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
`;
}

/**
 * `readVersion`, `advanceVersion` and the version table's share of `prune()`. The advance is one
 * upsert whose update applies only when the recorded version is lower or expired: SQLite runs one
 * writer at a time, so the compare and the set are one step, across processes too.
 */
export function versionRecords(
  db: SqliteDatabaseLike,
  table: string,
  operation: <T>(prepare: () => () => T) => Promise<T>,
  checkKey: (key: string) => void,
) {
  const quoted = quoteIdentifier(`${table}_versions`);
  let sql: Record<'read' | 'advance' | 'chunkEnd' | 'prune', SqliteStatementLike> | undefined;
  const statements = () => {
    if (sql === undefined) {
      db.exec(versionsSchemaSql(table));
      sql = {
        read: db.prepare(`SELECT version FROM ${quoted} WHERE key = ? AND expires_at > ?`),
        advance: db.prepare(`INSERT INTO ${quoted} (key, version, expires_at) VALUES (?, ?, ?)
ON CONFLICT (key) DO UPDATE SET version = excluded.version, expires_at = excluded.expires_at
WHERE version < excluded.version OR expires_at <= ?`),
        chunkEnd: db.prepare(`SELECT max(key) AS last FROM (SELECT key FROM ${quoted} WHERE key >= ? ORDER BY key LIMIT ?)`),
        prune: db.prepare(`DELETE FROM ${quoted} WHERE key >= ? AND key <= ? AND expires_at <= ?`),
      };
    }
    return sql;
  };
  const exists = (): boolean =>
    sql !== undefined || db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(`${table}_versions`) != null;

  return {
    // The table is made and the statements prepared when the call is made, never inside the store's
    // batch transaction: a rolled-back batch would take the new table with it and leave them stale.
    readVersion: (key: string) =>
      operation(() => {
        checkKey(key);
        const { read } = statements();
        return () => {
          const row = read.get(key, Date.now()) as { version: number } | null | undefined;
          return row == null ? undefined : Number(row.version);
        };
      }),
    advanceVersion: (key: string, version: number, retentionMs: number) =>
      operation(() => {
        checkKey(key);
        checkVersion(version, 'sqliteStore');
        positiveMs('sqliteStore', 'retentionMs', retentionMs);
        const { advance } = statements();
        return () => {
          const now = Date.now();
          const values: SqliteValue[] = [key, version, Math.ceil(now + retentionMs), now];
          return Number(advance.run(...values).changes) === 1;
        };
      }),
    /** Deletes the expired version rows; 0 when no guard ever made the table. */
    prune(): number {
      if (!exists()) return 0;
      // The primary key a chunk at a time, as the store's own prune: one read, then one short write.
      const { chunkEnd, prune } = statements();
      const now = Date.now();
      let deleted = 0;
      for (let from = ''; ; ) {
        const last = (chunkEnd.get(from, PRUNE_CHUNK) as { last: string | null } | null | undefined)?.last;
        if (last == null) return deleted;
        deleted += Number(prune.run(from, last, now).changes);
        if (last === from) return deleted;
        from = last;
      }
    },
  };
}
