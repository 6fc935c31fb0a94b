// What the store makes of MySQL's errors, by error number: a statement InnoDB rolled back as a
// deadlock victim is sent again; data the server refused is a StoreDataError (500, not 503); a table
// or database that is not there is a StoreNotSetUpError (500 CONFIGURATION_ERROR, with the fix).
import { StoreDataError, StoreNotSetUpError } from '@hookline/core/adapter';

export const ER_NO_SUCH_TABLE = 1146;
const ER_BAD_DB_ERROR = 1049;
export const ER_LOCK_DEADLOCK = 1213;
/** Out of range, wrong date, wrong string value, too long. */
const DATA_ERRORS = new Set([1264, 1292, 1366, 1406]);

/** The error's MySQL error number, if it has one. */
export const errno = (error: unknown): number | undefined => (error as { errno?: number } | null)?.errno;

/** A MySQL error as the receiver should see it; anything else as it is. */
export function asStoreError(error: unknown): unknown {
  const number = errno(error) ?? 0;
  const message = error instanceof Error ? error.message : String(error);
  if (number === ER_NO_SUCH_TABLE) {
    return new StoreNotSetUpError(
      `mysqlStore: ${message} (ER_NO_SUCH_TABLE). Run \`await store.setup()\` once at start-up: it creates the tables.`,
      { cause: error },
    );
  }
  if (number === ER_BAD_DB_ERROR) {
    return new StoreNotSetUpError(
      `mysqlStore: ${message} (ER_BAD_DB_ERROR). Create the database (CREATE DATABASE, the store's \`schema\` or the connection's database), then run \`await store.setup()\` once at start-up.`,
      { cause: error },
    );
  }
  if (DATA_ERRORS.has(number)) return new StoreDataError(`mysqlStore: the database refused the data: ${message}`, { cause: error });
  return error;
}

/** `asStoreError`, thrown: for a promise's `catch`. */
export function rethrowStoreError(error: unknown): never {
  throw asStoreError(error);
}
