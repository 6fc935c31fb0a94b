import { StoreDataError, wellFormedKey } from '@hookline/core/adapter';

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

/** A data exception as a StoreDataError (the receiver answers 500, not 503); anything else as it is. */
export function asStoreDataError(error: unknown): unknown {
  if (!isDataException(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreDataError(`postgresStore: the database refused the key (SQLSTATE ${sqlState(error)}): ${message}`, { cause: error });
}

/**
 * Returns the key, or throws a StoreDataError when it holds a lone surrogate: pg encodes strings as
 * UTF-8, which turns each one into U+FFFD, so `wdl_X\ud800` and `wdl_X\ufffd` would share one row.
 */
export const checkKey = (key: string): string => wellFormedKey('postgresStore', key);
