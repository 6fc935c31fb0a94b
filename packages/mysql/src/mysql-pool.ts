/**
 * The part of a `mysql2/promise` Pool (or Connection) the store uses. Structural, so
 * `mysql.createPool()` from `mysql2/promise` fits without a cast. (The callback API's pool has a
 * `.promise()` that returns one.)
 */
export interface MysqlQueryable {
  execute(options: { sql: string; timeout?: number }, values: MysqlValue[]): Promise<[unknown, unknown]>;
  query(options: { sql: string; timeout?: number }, values?: MysqlValue[]): Promise<[unknown, unknown]>;
}

/** The values the store binds: keys and tokens as UTF-8 bytes, durations as whole milliseconds. */
export type MysqlValue = Buffer | number;
