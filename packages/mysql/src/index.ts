// The store
export { mysqlStore, type MysqlStore, type MysqlStoreOptions } from './mysql-store';
// Its schema, for migrations you run yourself
export { SCHEMA_SQL, DEFAULT_TABLE, MAX_KEY_BYTES, schemaSql, type TableLocation } from './schema';
// The pool shape it accepts (structural: a mysql2/promise Pool fits without a cast)
export type { MysqlQueryable, MysqlValue } from './mysql-pool';
