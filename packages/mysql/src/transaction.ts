// Transactional handlers (`receiver.on(…, { transactional: true })`): the handler's writes, its
// completion record and (with an ordering guard) its version record commit together, on one
// connection of the store's pool. The version rows live in a table of their own (`<table>_versions`),
// InnoDB as the store's: one InnoDB transaction commits every table it wrote at once, or none.
import type { TransactionCompletion } from '@hookline/core/adapter';
import type { MysqlValue } from './mysql-pool';
import { asStoreError } from './store-errors';

/** A connection lent by a `mysql2/promise` Pool: what the handler gets as `context.transaction`. */
export interface MysqlPoolConnectionLike {
  query(options: { sql: string; timeout?: number }, values?: MysqlValue[]): Promise<[unknown, unknown]>;
  release(): void;
  /** Closes the connection instead of giving it back (its state is unknown). */
  destroy(): void;
}

/** A `mysql2/promise` Pool: it lends connections (a lone Connection has no `getConnection`). */
export interface MysqlPoolLike {
  getConnection(): Promise<MysqlPoolConnectionLike>;
}

export function lendsConnections(pool: unknown): pool is MysqlPoolLike {
  return typeof (pool as { getConnection?: unknown } | null)?.getConnection === 'function';
}

/** A server's answer (it has an errno under 2000): the connection itself is fine. */
function isServerError(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' && errno < 2000;
}

/** A statement with its values. */
type MysqlQuery = { sql: string; values: MysqlValue[] };

/**
 * The store's `transaction()`: START TRANSACTION on a pooled connection, `work(connection)`, then the
 * completion of `key` for `token` on that connection (an UPDATE that locks the row and matches only
 * while the token still holds the lease), then with `version` the advance of that version record
 * (versions.ts's compare-and-set: a version not higher changes nothing and the commit goes on), then
 * COMMIT. A throw in `work` rolls back and is rethrown; a token that lost the lease rolls back and
 * answers `completed: false`. A connection whose state is unknown (a failed ROLLBACK or COMMIT, a lost
 * connection) is destroyed, not given back.
 */
export function mysqlTransaction(
  pool: MysqlPoolLike,
  statements: {
    complete: (key: string, token: string, retentionMs: number) => MysqlQuery;
    advance: (key: string, version: number, retentionMs: number) => MysqlQuery;
  },
  timeout: number,
) {
  return async function transaction<T>(
    work: (transaction: unknown) => Promise<T>,
    options: TransactionCompletion,
  ): Promise<{ value: T; completed: boolean }> {
    // Every argument is checked before a connection is borrowed and the work runs: a version that is
    // not a finite number is refused here, not after the handler's writes.
    const { version } = options;
    const advance = version === undefined ? undefined : statements.advance(version.key, version.version, version.retentionMs);
    const complete = statements.complete(options.key, options.token, options.retentionMs);
    const connection = await pool.getConnection();
    let broken = false;
    const send = (sql: string, values?: MysqlValue[]) => connection.query({ sql, timeout }, values);
    const rollback = async (): Promise<void> => {
      try {
        await send('ROLLBACK');
      } catch {
        broken = true;
      }
    };
    try {
      try {
        await send('START TRANSACTION');
      } catch (error) {
        if (!isServerError(error)) broken = true;
        throw error;
      }
      let value: T;
      try {
        value = await work(connection);
      } catch (error) {
        await rollback();
        throw error;
      }
      let completed: boolean;
      try {
        const [header] = await send(complete.sql, complete.values);
        completed = Number((header as { affectedRows?: unknown }).affectedRows ?? 0) === 1;
      } catch (error) {
        await rollback();
        throw asStoreError(error);
      }
      if (!completed) {
        await rollback();
        return { value, completed: false };
      }
      if (advance !== undefined) {
        try {
          // Not higher than the recorded version: the row keeps its values, and the completion still commits.
          await send(advance.sql, advance.values);
        } catch (error) {
          await rollback();
          throw asStoreError(error);
        }
      }
      try {
        await send('COMMIT');
      } catch (error) {
        broken = true; // committed or not, nobody can tell from here: the lease stays, the next attempt decides
        throw error;
      }
      return { value, completed: true };
    } finally {
      if (broken) connection.destroy();
      else connection.release();
    }
  };
}
