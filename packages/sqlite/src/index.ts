// The store
export { sqliteStore, type SqliteStore, type SqliteStoreOptions } from './sqlite-store';
// Its schema, for a look at the table or migrations you run yourself
export { SCHEMA_SQL, DEFAULT_TABLE, schemaSql } from './schema';
// The database shape it accepts (structural: node:sqlite, better-sqlite3, libsql and bun:sqlite fit without a cast)
export type { SqliteDatabaseLike, SqliteStatementLike, SqliteValue } from './database';
