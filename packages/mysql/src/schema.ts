/** The table name used when none is given. */
export const DEFAULT_TABLE = 'hookline_idempotency';

/** The longest key, in UTF-8 bytes, InnoDB can index (its limit for one key, with the DYNAMIC row format). */
export const MAX_KEY_BYTES = 3_072;
/** The longest lease token, in UTF-8 bytes (the receiver's are 36). */
export const MAX_TOKEN_BYTES = 255;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Quotes a table or schema name after checking it is a plain identifier (no injection through options). */
export function quoteIdentifier(kind: string, name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new RangeError(
      `mysqlStore: ${kind} ${JSON.stringify(name)} must be a plain identifier (letters, digits, _; at most 64; not starting with a digit)`,
    );
  }
  return `\`${name}\``;
}

/** Where the store's table lives. */
export interface TableLocation {
  /**
   * The table's name.
   * @default 'hookline_idempotency'
   */
  table?: string;
  /**
   * The schema (in MySQL, a database) holding the table; unset, the connection's current database.
   * @default undefined
   */
  schema?: string;
}

/** `` `schema`.`table` ``, or `` `table` `` without a schema. */
export function qualifiedTable(location: TableLocation = {}): string {
  const table = quoteIdentifier('table', location.table ?? DEFAULT_TABLE);
  return location.schema === undefined ? table : `${quoteIdentifier('schema', location.schema)}.${table}`;
}

/**
 * The DDL of the store's table, for MySQL 8 and MariaDB 10.11+, for migrations you run yourself;
 * `store.setup()` runs the same. One InnoDB row per delivery key:
 * - `k`: the key's UTF-8 bytes, compared byte for byte (a case- or accent-insensitive collation
 *   would make `A` and `a`, or `é` and `e\u0301`, one delivery);
 * - `state`: `l` a lease held by `token` until `expires_at`; `r` released at `expires_at`; `c`
 *   completed, retained until `expires_at`;
 * - `attempt`: how many claims this key has had;
 * - `expires_at`, `purge_at`: milliseconds since the epoch on the database's clock; `prune()` deletes
 *   a row once `purge_at` has passed (indexed for it).
 *
 * @example
 * await pool.query(schemaSql({ table: 'webhook_deliveries' }));
 */
export function schemaSql(location: TableLocation = {}): string {
  const index = quoteIdentifier('index', `${location.table ?? DEFAULT_TABLE}_purge_at`);
  return `CREATE TABLE IF NOT EXISTS ${qualifiedTable(location)} (
  k          VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
  state      CHAR(1) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  token      VARBINARY(${MAX_TOKEN_BYTES}) NULL,
  attempt    INT UNSIGNED NOT NULL,
  expires_at BIGINT NOT NULL,
  purge_at   BIGINT NOT NULL,
  PRIMARY KEY (k),
  KEY ${index} (purge_at)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;
`;
}

/** The DDL with the default names, the same text as `schema.sql` shipped beside this file. */
export const SCHEMA_SQL: string = schemaSql();
