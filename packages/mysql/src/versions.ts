// Version records for ordering guards (`receiver.on(…, { order })`), in a table of their own beside the
// store's (`<table>_versions`, created by `setup()`): one row per resource and guarded handler,
// its highest version processed (a DOUBLE: the JavaScript number, compared exactly), kept until
// `expires_at` (milliseconds since the epoch on the database clock, as the store's other times).
import { checkVersion, positiveMs, StoreNotSetUpError } from '@hookline/core/adapter';
import type { MysqlQueryable, MysqlValue } from './mysql-pool';
import { DEFAULT_TABLE, MAX_KEY_BYTES, quoteIdentifier, type TableLocation } from './schema';
import { asStoreError, ER_LOCK_DEADLOCK, ER_NO_SUCH_TABLE, errno } from './store-errors';

const NOW = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000)";

/** `` `schema`.`<table>_versions` ``. */
export function qualifiedVersionsTable(location: TableLocation = {}): string {
  const table = quoteIdentifier('table', `${location.table ?? DEFAULT_TABLE}_versions`);
  return location.schema === undefined ? table : `${quoteIdentifier('schema', location.schema)}.${table}`;
}

/** The DDL of the version table (one statement: mysql2 sends one per query). */
export function versionsSchemaSql(location: TableLocation = {}): string {
  const index = quoteIdentifier('index', `${location.table ?? DEFAULT_TABLE}_versions_expires_at`);
  return `CREATE TABLE IF NOT EXISTS ${qualifiedVersionsTable(location)} (
  k          VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
  version    DOUBLE NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (k),
  KEY ${index} (expires_at)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;
`;
}

/**
 * The statements of the version table. The advance is one `INSERT … ON DUPLICATE KEY UPDATE`: the row
 * lock makes concurrent advances queue. MySQL assigns left to right and each assignment sees the
 * columns already assigned, so `version` goes first (reading the old `version` and `expires_at`), and
 * `expires_at` is renewed when `version` now holds the caller's. Whether it advanced comes back through
 * LAST_INSERT_ID (MySQL's INSERT has no RETURNING): 1 when it did, 2 when not, the last call winning.
 */
export function versionStatements(table: string) {
  return {
    /** key → the row while it lives. */
    read: `SELECT version FROM ${table} WHERE k = ? AND expires_at > ${NOW}`,
    /** key, version, retention, version, version, version, retention → insertId 1 advanced, 2 not. */
    advance: `INSERT INTO ${table} (k, version, expires_at) VALUES (?, IF(LAST_INSERT_ID(1) > 0, ?, 0), ${NOW} + ?)
ON DUPLICATE KEY UPDATE
  version    = IF(version < ? OR expires_at <= ${NOW}, IF(LAST_INSERT_ID(1) > 0, ?, 0), IF(LAST_INSERT_ID(2) > 0, version, version)),
  expires_at = IF(version = ?, ${NOW} + ?, expires_at)`,
    prune: `DELETE FROM ${table} WHERE expires_at <= ${NOW} ORDER BY expires_at LIMIT 5000`,
  };
}

/** `readVersion`, `advanceVersion` and the version table's share of `prune()`. */
export function versionRecords(options: {
  pool: MysqlQueryable;
  location: TableLocation;
  prepared: boolean;
  timeout: number;
  /** The key's UTF-8 bytes, or a StoreDataError (the store's own check). */
  keyBytes: (key: string) => Buffer;
}) {
  const { pool, prepared, timeout, keyBytes } = options;
  let sql: ReturnType<typeof versionStatements> | undefined;
  const statements = () => {
    if (sql === undefined) sql = versionStatements(qualifiedVersionsTable(options.location));
    return sql;
  };
  async function send(text: string, values: MysqlValue[]): Promise<unknown> {
    for (let tries = 1; ; tries++) {
      try {
        const [result] = prepared ? await pool.execute({ sql: text, timeout }, values) : await pool.query({ sql: text, timeout }, values);
        return result;
      } catch (error) {
        if (errno(error) === ER_LOCK_DEADLOCK && tries < 4) continue;
        throw asStoreError(error);
      }
    }
  }
  /**
   * The advance with its values, its arguments checked (a version that is not a finite number is a
   * StoreDataError), for `advanceVersion` and for a transaction that advances with its completion.
   */
  function advanceQuery(key: string, version: number, retentionMs: number): { sql: string; values: MysqlValue[] } {
    checkVersion(version, 'mysqlStore');
    const bytes = keyBytes(key);
    const retention = Math.ceil(positiveMs('mysqlStore', 'retentionMs', retentionMs));
    return { sql: statements().advance, values: [bytes, version, retention, version, version, version, retention] };
  }
  return {
    async readVersion(key: string): Promise<number | undefined> {
      const rows = (await send(statements().read, [keyBytes(key)])) as { version: number | string }[];
      return rows[0] === undefined ? undefined : Number(rows[0].version);
    },
    advanceQuery,
    async advanceVersion(key: string, version: number, retentionMs: number): Promise<boolean> {
      const { sql, values } = advanceQuery(key, version, retentionMs);
      const header = (await send(sql, values)) as { insertId?: unknown };
      return Number(header.insertId) === 1;
    },
    /** Deletes expired version rows; 0 when the table does not exist (a schema from before versions). */
    async prune(): Promise<number> {
      let deleted = 0;
      for (;;) {
        let affected: number;
        try {
          affected = Number(((await send(statements().prune, [])) as { affectedRows?: unknown }).affectedRows ?? 0);
        } catch (error) {
          if (errno(error) === ER_NO_SUCH_TABLE || StoreNotSetUpError.is(error)) return deleted;
          throw error;
        }
        deleted += affected;
        if (affected < 5000) return deleted;
      }
    },
  };
}
