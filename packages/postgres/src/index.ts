// The store
export { postgresStore, type PostgresStore, type PostgresStoreOptions } from './postgres-store';
// Its schema, for migrations you run yourself
export { SCHEMA_SQL, DEFAULT_TABLE, schemaSql, type TableLocation } from './schema';
// The pool shape it accepts (structural: a pg Pool fits without a cast)
export type { PgPoolLike } from './pg-pool';
