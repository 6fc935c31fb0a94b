import { versionsSchemaSql } from './versions';

/** Where the store's table lives. */
export interface TableLocation {
  /**
   * The table's name.
   * @default 'hookline_idempotency'
   */
  table?: string;
  /**
   * The schema holding the table; unset, the connection's `search_path` decides (usually `public`).
   * @default undefined
   */
  schema?: string;
}

/** The version table's name: the store's table name with `_versions`, in the same schema. */
export function qualifiedVersionsTable(location: TableLocation = {}): string {
  const table = quoteIdentifier('table', `${location.table ?? DEFAULT_TABLE}_versions`);
  return location.schema === undefined ? table : `${quoteIdentifier('schema', location.schema)}.${table}`;
}

/** The table name used when none is given. */
export const DEFAULT_TABLE = 'hookline_idempotency';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Quotes a table or schema name after checking it is a plain identifier (no injection through options). */
export function quoteIdentifier(kind: string, name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new RangeError(
      `postgresStore: ${kind} ${JSON.stringify(name)} must be a plain identifier (letters, digits, _; at most 63; not starting with a digit)`,
    );
  }
  return `"${name}"`;
}

/** `"schema"."table"`, or `"table"` without a schema. */
export function qualifiedTable(location: TableLocation = {}): string {
  const table = quoteIdentifier('table', location.table ?? DEFAULT_TABLE);
  return location.schema === undefined ? table : `${quoteIdentifier('schema', location.schema)}.${table}`;
}

/**
 * The DDL of the store's table, for migrations you run yourself; `store.setup()` runs the same.
 * One row per delivery key:
 * - `state`: `l` a lease held by `token` until `expires_at`; `r` released at `expires_at`; `c` completed,
 *   retained until `expires_at`;
 * - `attempt`: how many claims this key has had;
 * - `purge_at`: when `prune()` may delete the row (leases and released rows outlive their lease so the
 *   attempt count survives; a completion goes at the end of its retention). Indexed for `prune()`.
 *
 * Beside it, `<table>_versions` holds the ordering guards' version records (versions.ts): one row per
 * resource and guarded handler, its highest `version` processed, kept until `expires_at`.
 *
 * @example
 * await pool.query(schemaSql({ schema: 'webhooks' }));
 */
export function schemaSql(location: TableLocation = {}): string {
  const table = qualifiedTable(location);
  const index = quoteIdentifier('index', `${location.table ?? DEFAULT_TABLE}_purge_at_idx`);
  const createSchema = location.schema === undefined ? '' : `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier('schema', location.schema)};\n`;
  return `${createSchema}CREATE TABLE IF NOT EXISTS ${table} (
  key        text        PRIMARY KEY,
  state      "char"      NOT NULL CHECK (state IN ('l', 'r', 'c')),
  token      text,
  attempt    integer     NOT NULL,
  expires_at timestamptz NOT NULL,
  purge_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (purge_at);
${versionsSchemaSql(qualifiedVersionsTable(location), quoteIdentifier('index', `${location.table ?? DEFAULT_TABLE}_versions_expires_at_idx`))}`;
}

/** The DDL with the default names, the same text as `schema.sql` shipped beside this file. */
export const SCHEMA_SQL: string = schemaSql();
