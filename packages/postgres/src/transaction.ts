// Transactional handlers (`receiver.on(…, { transactional: true })`): the handler's writes, its
// completion record and (with an ordering guard) its version record commit together, on one
// connection of the store's pool. The version rows live in a table of their own (`<table>_versions`),
// in the same database and the same transaction: PostgreSQL commits every table a transaction wrote
// at once, or none of them.
import { positiveMs, type TransactionCompletion } from '@hookline/core/adapter';
import { asStoreError, checkKey } from './data-errors';

/** A connection lent by a pg Pool (`pool.connect()`): what the handler gets as `context.transaction`. */
export interface PgPoolClientLike {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
  /** Gives the connection back; with an error, the pool discards it instead. */
  release(error?: Error | boolean): void;
  /** pg's Client is an EventEmitter: it emits `error` when its connection ends under it. */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pg Pool: it lends connections. (A pg Client has `connect()` too, but it opens itself.) */
export interface PgPoolLike {
  connect(): Promise<PgPoolClientLike>;
}

/**
 * Whether `pool` lends connections. pg's Pool counts them (`totalCount`, `idleCount`); a pg Client
 * does not, and its `connect()` would try to open it again.
 */
export function lendsConnections(pool: unknown): pool is PgPoolLike {
  const candidate = pool as { connect?: unknown; totalCount?: unknown; idleCount?: unknown } | null;
  return typeof candidate?.connect === 'function' && typeof candidate.totalCount === 'number' && typeof candidate.idleCount === 'number';
}

/** A statement with its values, as pg's `query()` takes it. */
type PgQuery = { name?: string; text: string; values: unknown[] };

/**
 * The store's `transaction()`: BEGIN on a pooled connection, `work(client)`, then the completion of
 * `key` for `token` on that connection (an UPDATE that locks the row, and matches only while the
 * token still holds the lease), then with `completion.version` the advance of that version record
 * (versions.ts's compare-and-set: a version not higher changes nothing and the commit goes on), then
 * COMMIT. A throw in `work` rolls back and is rethrown; a token that lost the lease (another attempt
 * took the delivery over) rolls back and answers `completed: false`. The connection is discarded, not
 * reused, whenever its state is unknown.
 */
export function pgTransaction(
  pool: PgPoolLike,
  complete: () => { name?: string; text: string },
  advance: (key: string, version: number, retentionMs: number) => PgQuery,
) {
  return async function transaction<T>(
    work: (transaction: unknown) => Promise<T>,
    completion: TransactionCompletion,
  ): Promise<{ value: T; completed: boolean }> {
    const { token, retentionMs, version } = completion;
    // Every argument is checked before a connection is borrowed and the work runs: a version that is
    // not a finite number is refused here, not after the handler's writes.
    const advanceVersion = version === undefined ? undefined : advance(version.key, version.version, version.retentionMs);
    const key = checkKey(completion.key);
    positiveMs('postgresStore', 'retentionMs', retentionMs);
    const client = await pool.connect();
    let broken: Error | undefined;
    // pg's pool stops listening for a lent connection's errors: if the server ends the connection
    // while the work runs (a restart, pg_terminate_backend, a cut link), the client's `error` event
    // would have no listener and take the whole process down as an uncaught exception. Heard here,
    // the error marks the connection broken (it is discarded, never lent again); the query in flight
    // rejects on its own, so the transaction fails and the lease stays for the next attempt.
    const onConnectionError = (error: Error): void => {
      broken ??= error;
    };
    client.on?.('error', onConnectionError);
    const rollback = async (): Promise<void> => {
      try {
        await client.query({ text: 'ROLLBACK' });
      } catch (error) {
        broken = error instanceof Error ? error : new Error(String(error));
      }
    };
    try {
      try {
        await client.query({ text: 'BEGIN' });
      } catch (error) {
        if (!isServerError(error)) broken = error instanceof Error ? error : new Error(String(error));
        throw error;
      }
      let value: T;
      try {
        value = await work(client);
      } catch (error) {
        await rollback();
        throw error;
      }
      let completed: boolean;
      try {
        const result = await client.query({ ...complete(), values: [key, token, retentionMs] });
        completed = result.rowCount === 1;
      } catch (error) {
        await rollback();
        throw asStoreError(error);
      }
      if (!completed) {
        await rollback();
        return { value, completed: false };
      }
      if (advanceVersion !== undefined) {
        try {
          // Not higher than the recorded version: no row changes, and the completion still commits.
          await client.query(advanceVersion);
        } catch (error) {
          await rollback();
          throw asStoreError(error);
        }
      }
      try {
        await client.query({ text: 'COMMIT' });
      } catch (error) {
        // Committed or not, nobody can tell from here: the lease stays, so the next attempt decides.
        broken = error instanceof Error ? error : new Error(String(error));
        throw error;
      }
      return { value, completed: true };
    } finally {
      client.off?.('error', onConnectionError);
      client.release(broken);
    }
  };
}

/** A server's answer (it has a SQLSTATE): the connection itself is fine. */
function isServerError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
