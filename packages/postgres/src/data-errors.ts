import { StoreDataError, StoreNotSetUpError, wellFormedKey } from '@hookline/core/adapter';

/** What pg puts on a server error: the SQLSTATE. */
const sqlState = (error: unknown): string => String((error as { code?: unknown } | null)?.code ?? '');

/**
 * Whether the database refused the values themselves, so the same operation can never succeed:
 * SQLSTATE class 22, data exception (U+0000 in text 22021, a character the encoding lacks 22P05…),
 * and class 54, program limit exceeded (a key too large for the primary key's index, 54000). Such a
 * statement changed nothing, and in a batch one item's value may be why.
 */
export function isDataException(error: unknown): boolean {
  const state = sqlState(error);
  return state.startsWith('22') || state.startsWith('54');
}

/** A table or schema that is not there: undefined_table (42P01), invalid_schema_name (3F000). */
const NOT_SET_UP = new Set(['42P01', '3F000']);

/**
 * A store error as the receiver should see it: a missing table or schema as a StoreNotSetUpError (500
 * CONFIGURATION_ERROR, with the fix), a data exception as a StoreDataError (500, not 503); anything
 * else as it is.
 */
export function asStoreError(error: unknown): unknown {
  const state = sqlState(error);
  const message = error instanceof Error ? error.message : String(error);
  if (NOT_SET_UP.has(state)) {
    return new StoreNotSetUpError(
      `postgresStore: ${message} (SQLSTATE ${state}). Run \`await store.setup()\` once at start-up: it creates the schema and the tables (or apply schemaSql() in a migration).`,
      { cause: error },
    );
  }
  if (!isDataException(error)) return error;
  return new StoreDataError(`postgresStore: the database refused the key (SQLSTATE ${state}): ${message}`, { cause: error });
}

/** `asStoreError`, thrown: for a promise's `catch`. */
export function rethrowStoreError(error: unknown): never {
  throw asStoreError(error);
}

/**
 * Returns the key, or throws a StoreDataError when it holds a lone surrogate: pg encodes strings as
 * UTF-8, which turns each one into U+FFFD, so `wdl_X\ud800` and `wdl_X\ufffd` would share one row.
 */
export const checkKey = (key: string): string => wellFormedKey('postgresStore', key);
