// Version records for ordering guards (`receiver.on(…, { order })`), in a table of their own beside the
// store's (`<table>_versions`, created by schemaSql/setup): one row per resource and guarded
// handler, holding the highest version processed, kept until `expires_at` on the database clock.
import { checkVersion, positiveMs } from '@hookline/core/adapter';
import { asStoreError, checkKey } from './data-errors';
import type { PgPoolLike } from './pg-pool';

const NOW = 'statement_timestamp()';

/**
 * The DDL of the version table (`table` and `index` quoted). `version` is a float8, the JavaScript
 * number the guard computed (a timestamp in ms or a rank), compared exactly; `expires_at` is indexed
 * for `prune()`.
 */
export function versionsSchemaSql(table: string, index: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  key        text        PRIMARY KEY,
  version    float8      NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at);
`;
}

/**
 * The statements of the version table. The advance is one `INSERT … ON CONFLICT … DO UPDATE … WHERE`:
 * the conflicting row is locked and rewritten only when its version is lower or it expired, so
 * concurrent advances serialise on the row and the highest version wins; a row comes back only when
 * it was written.
 */
export function versionStatements(table: string) {
  return {
    read: `SELECT version FROM ${table} WHERE key = $1::text AND expires_at > ${NOW}`,
    advance: `INSERT INTO ${table} AS r (key, version, expires_at)
VALUES ($1::text, $2::float8, ${NOW} + ($3::float8 * interval '1 millisecond'))
ON CONFLICT (key) DO UPDATE SET version = EXCLUDED.version, expires_at = EXCLUDED.expires_at
  WHERE r.version < EXCLUDED.version OR r.expires_at <= ${NOW}
RETURNING 1`,
    prune: `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE expires_at <= ${NOW} FOR UPDATE SKIP LOCKED)`,
  };
}

/** `readVersion`, `advanceVersion` and the version table's share of `prune()`. */
export function versionRecords(
  pool: PgPoolLike,
  table: () => string,
  named: (kind: string, text: string) => { name?: string; text: string },
) {
  // Built on first use: a table name too long for the suffix fails only where versions are used.
  let sql: ReturnType<typeof versionStatements> | undefined;
  const statements = () => {
    if (sql === undefined) sql = versionStatements(table());
    return sql;
  };
  const one = async <T>(query: () => Promise<T>): Promise<T> => {
    try {
      return await query();
    } catch (error) {
      throw asStoreError(error);
    }
  };
  /**
   * The advance as a query, its arguments checked (a version that is not a finite number is a
   * StoreDataError), for `advanceVersion` and for a transaction that advances with its completion. A
   * row comes back only when it advanced.
   */
  function advanceQuery(key: string, version: number, retentionMs: number): { name?: string; text: string; values: unknown[] } {
    checkVersion(version, 'postgresStore');
    checkKey(key);
    positiveMs('postgresStore', 'retentionMs', retentionMs);
    return { ...named('version_advance', statements().advance), values: [key, version, retentionMs] };
  }
  return {
    async readVersion(key: string): Promise<number | undefined> {
      const text = statements().read;
      const result = await one(() => pool.query({ ...named('version_read', text), values: [checkKey(key)] }));
      const row = result.rows[0] as { version: number | string } | undefined;
      return row === undefined ? undefined : Number(row.version);
    },
    advanceQuery,
    async advanceVersion(key: string, version: number, retentionMs: number): Promise<boolean> {
      const query = advanceQuery(key, version, retentionMs);
      const result = await one(() => pool.query(query));
      return result.rowCount === 1;
    },
    /** Deletes expired version rows; 0 when the table does not exist (a schema from before versions). */
    async prune(): Promise<number> {
      try {
        const result = await pool.query({ text: statements().prune });
        return result.rowCount ?? 0;
      } catch (error) {
        if ((error as { code?: unknown } | null)?.code === '42P01') return 0; // undefined_table
        throw error;
      }
    },
  };
}
