/** The table name used when none is given. */
export const DEFAULT_TABLE = 'hookline_idempotency';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Quotes a table name after checking it is a plain identifier (no injection through options). */
export function quoteIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new RangeError(
      `sqliteStore: table ${JSON.stringify(name)} must be a plain identifier (letters, digits, _; at most 63; not starting with a digit)`,
    );
  }
  return `"${name}"`;
}

/**
 * The DDL of the store's table; the store runs it when it opens (`CREATE … IF NOT EXISTS`). One row
 * per delivery key, without a rowid (the key is the primary key, stored once):
 * - `state`: `l` a lease held by `token` until `expires_at`; `r` released at `expires_at`; `c`
 *   completed, retained until `expires_at`;
 * - `attempt`: how many claims this key has had;
 * - `expires_at`, `purge_at`: milliseconds since the epoch; `prune()` deletes a row once `purge_at`
 *   has passed. It walks the primary key in chunks rather than keeping an index on `purge_at`: the
 *   index cost every claim a second page write, and a walk of a million rows takes about a second an
 *   hour, in chunks short enough that no writer waits long.
 *
 * @example
 * db.exec(schemaSql('webhook_deliveries'));
 */
export function schemaSql(table: string = DEFAULT_TABLE): string {
  const quoted = quoteIdentifier(table);
  return `CREATE TABLE IF NOT EXISTS ${quoted} (
  key        TEXT    NOT NULL PRIMARY KEY,
  state      TEXT    NOT NULL CHECK (state IN ('l', 'r', 'c')),
  token      TEXT,
  attempt    INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  purge_at   INTEGER NOT NULL
) WITHOUT ROWID;
`;
}

/** The DDL with the default table name, the same text as `schema.sql` shipped beside this file. */
export const SCHEMA_SQL: string = schemaSql();
