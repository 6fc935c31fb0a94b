// Transactional handlers (`receiver.on(…, { transactional: true })`): the handler's writes and its
// completion record commit together, on one connection of the store's pool.
import type { MysqlValue } from './mysql-pool';

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

/**
 * The store's `transaction()`: START TRANSACTION on a pooled connection, `work(connection)`, then the
 * completion of `key` for `token` on that connection (an UPDATE that locks the row and matches only
 * while the token still holds the lease), then COMMIT. A throw in `work` rolls back and is rethrown; a
 * token that lost the lease rolls back and answers `completed: false`. A connection whose state is
 * unknown (a failed ROLLBACK or COMMIT, a lost connection) is destroyed, not given back.
 */
export function mysqlTransaction(
  pool: MysqlPoolLike,
  completion: (key: string, token: string, retentionMs: number) => { sql: string; values: MysqlValue[] },
  timeout: number,
) {
  return async function transaction<T>(
    work: (transaction: unknown) => Promise<T>,
    options: { key: string; token: string; retentionMs: number },
  ): Promise<{ value: T; completed: boolean }> {
    const complete = completion(options.key, options.token, options.retentionMs); // checks the key first
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
        throw error;
      }
      if (!completed) {
        await rollback();
        return { value, completed: false };
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
