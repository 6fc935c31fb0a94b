import type { ClaimResult, IdempotencyStore } from '@hookline/core';
import {
  DEFAULT_RETENTION_MS,
  positiveMs,
  refuseRenamedOptions,
  StoreDataError,
  StoreNotSetUpError,
  wellFormedKey,
} from '@hookline/core/adapter';
import { openNodeSqlite, type SqliteDatabaseLike, type SqliteStatementLike, type SqliteValue } from './database';
import { DEFAULT_TABLE, quoteIdentifier, schemaSql } from './schema';
import { statements } from './statements';
import { versionRecords } from './versions';

/** Options of `sqliteStore()`: a `filename` for node:sqlite, or a `client` (a database you opened). */
export interface SqliteStoreOptions {
  /**
   * The database file, opened with `node:sqlite` (Node 22.13 and later). Every process that opens
   * the same file shares the store. The store closes it in `close()`. Give this or `client`.
   */
  filename?: string;
  /**
   * A database you opened: `node:sqlite`'s `DatabaseSync`, a `better-sqlite3` or libsql `Database`,
   * or `bun:sqlite`'s `Database`. The store never closes it. Give this or `filename`.
   */
  client?: SqliteDatabaseLike;
  /**
   * The table's name (a plain identifier).
   * @default 'hookline_idempotency'
   */
  table?: string;
  /**
   * How long a lease or released row outlives its lease, so a later claim's `attempt` keeps counting
   * (the service's last retry comes about 31 h after the first). `prune()` deletes it afterwards.
   * @default 259_200_000 (72 h)
   */
  keepMs?: number;
  /**
   * How long a statement waits for another process's write to finish before it fails (SQLite's
   * `busy_timeout`; the wait blocks this process's event loop). Keep it under the receiver's
   * `storeTimeoutMs`.
   * @default 2_000
   */
  busyTimeoutMs?: number;
  /**
   * SQLite's `synchronous` setting, set on the connection (yours too, with `client`). `'normal'`
   * (with WAL) survives any crash of the process; a power loss may roll back the last completions,
   * which the service's retries then run again. `'full'` survives a power loss too, at one fsync per
   * write (milliseconds each on most disks, against microseconds).
   * @default 'normal'
   */
  synchronous?: 'normal' | 'full';
  /**
   * Runs `prune()` this often, on an unref'd timer (`close()` stops it). `0` turns it off: call
   * `prune()` yourself.
   * @default 3_600_000 (1 h)
   */
  pruneEveryMs?: number;
}

/** An SQLite store, plus its housekeeping. */
export interface SqliteStore extends IdempotencyStore {
  /** The quoted table name used in every statement. */
  readonly table: string;
  /** Deletes the rows nothing needs any more (see `keepMs`), walking the table in chunks; resolves how many. */
  prune(): Promise<number>;
  /**
   * Stops the prune timer, writes the operations still queued (each answered after its commit, or
   * rejected), and closes the database if the store opened it (`filename`); operations asked of it
   * afterwards are rejected.
   */
  close(): Promise<void>;
}

const PRUNE_CHUNK = 5_000;
/** A claim that found the row changing between its two statements tries again, this many times. */
const CLAIM_TRIES = 5;
/**
 * The most operations one commit takes: the write lock is held while they run (tens of microseconds
 * each), and other processes' writers wait for it. The rest go to the next commit, a turn later.
 */
const BATCH_MAX = 64;

// Every runtime the store supports has setImmediate; the fallback only keeps the queue working elsewhere.
const nextTurn: (run: () => void) => unknown = typeof setImmediate === 'function' ? setImmediate : (run) => setTimeout(run, 0);

const ms = (name: string, value: number): number => Math.ceil(positiveMs('sqliteStore', name, value));

function nonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError(`sqliteStore: ${name} must be a number of milliseconds >= 0, got ${value}`);
  }
  return Math.ceil(value);
}

/**
 * A key SQLite would store as something else: a lone surrogate becomes U+FFFD on its way to UTF-8,
 * so two different keys would meet in one row.
 */
function checkKey(key: string): void {
  wellFormedKey('sqliteStore', key);
}

/** SQLite's verdict on the value itself (too big, wrong type), not on the database's health. */
function isDataError(error: unknown): boolean {
  const text = `${(error as { code?: unknown } | null)?.code ?? ''} ${error instanceof Error ? error.message : ''}`;
  return /SQLITE_TOOBIG|SQLITE_MISMATCH|string or blob too big/i.test(text);
}

/**
 * The error an operation is rejected with: data errors as StoreDataError; a table that is gone as
 * StoreNotSetUpError (500 CONFIGURATION_ERROR: the store made it when it opened, so something dropped
 * it since); anything else as it came.
 */
function rejection(error: unknown): unknown {
  if (error instanceof Error && /no such table/i.test(error.message)) {
    return new StoreNotSetUpError(
      `sqliteStore: ${error.message}. The store creates its tables when it opens, so something removed one since (a migration, a restore, another file at this path): open the store again (sqliteStore() creates them), or restore the table.`,
      { cause: error },
    );
  }
  if (error instanceof StoreDataError || StoreDataError.is(error) || !isDataError(error)) return error;
  return new StoreDataError(`sqliteStore: SQLite refused the data: ${(error as Error).message}`, { cause: error });
}

/** BEGIN refused because the connection is already in a transaction: one the application opened on it. */
function isNestedBegin(error: unknown): boolean {
  return error instanceof Error && /within a transaction/i.test(error.message);
}

/** An operation waiting for its turn's commit. */
interface Pending {
  run: () => unknown;
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
}

/** SQLITE_BUSY or one of its extended codes, as better-sqlite3 (`code`) and node:sqlite (`errcode`) report them. */
function isBusy(error: unknown): boolean {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  return (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) || (typeof errcode === 'number' && (errcode & 0xff) === 5);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `sql`, trying again every 10 ms while SQLite answers SQLITE_BUSY, for up to `timeoutMs`.
 * Switching a new file to WAL needs it to itself, and SQLite answers that switch SQLITE_BUSY at once,
 * without waiting out `busy_timeout`, when another connection that holds a read lock is waiting to
 * write (it would deadlock otherwise). That is what happens when several processes open one new file
 * together (every worker of a cluster starting at once): one sets WAL up while another creates the
 * table. The store is built synchronously, so the wait blocks, as `busy_timeout`'s own waits do.
 */
function execWhileBusy(db: Pick<SqliteDatabaseLike, 'exec'>, sql: string, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      db.exec(sql);
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}

/**
 * An idempotency store in SQLite: durable, embedded, for the receiver processes of one machine that
 * open the same file. WAL mode (readers never wait for the writer), a busy timeout (writers of other
 * processes wait their turn), one statement per operation: a claim is one
 * `INSERT … ON CONFLICT (key) DO UPDATE … WHERE <lease or retention ended> RETURNING attempt`.
 *
 * The commit, not the statement, is most of a write's cost, so the operations of one event-loop turn
 * share one: they are queued, then run in order at the end of the turn in one `BEGIN IMMEDIATE …
 * COMMIT` (at most 64 to a commit; a lone operation runs on its own, as its own commit). Each promise
 * settles only after that commit: nothing is answered acquired or completed that was not committed. A
 * failed BEGIN or COMMIT (`SQLITE_BUSY` past the timeout, a full disk, an I/O error) rolls the batch
 * back and rejects all of it; a value SQLite refuses rejects only its own operation
 * (`StoreDataError`). Errors come back as a rejected promise, which the receiver answers 503 (the
 * service retries), or 500 for a `StoreDataError`, and 500 CONFIGURATION_ERROR for a table removed
 * after the store made it (`StoreNotSetUpError`).
 *
 * @example
 * import { createReceiver } from '@hookline/core';
 * import { sqliteStore } from '@hookline/sqlite';
 *
 * const store = sqliteStore({ filename: '/var/lib/myapp/hookline.db' }); // node:sqlite, Node 22.13+
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET!, store });
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  refuseRenamedOptions('sqliteStore', options, { database: 'client' });
  if ((options.filename === undefined) === (options.client === undefined)) {
    throw new TypeError('sqliteStore: give either `filename` (opened with node:sqlite) or `client` (a database you opened)');
  }
  const table = quoteIdentifier(options.table ?? DEFAULT_TABLE);
  const keep = ms('keepMs', options.keepMs ?? DEFAULT_RETENTION_MS);
  const busyTimeout = nonNegative('busyTimeoutMs', options.busyTimeoutMs ?? 2_000);
  const pruneEvery = nonNegative('pruneEveryMs', options.pruneEveryMs ?? 3_600_000);
  const synchronous = options.synchronous ?? 'normal';
  if (synchronous !== 'normal' && synchronous !== 'full') {
    throw new RangeError(`sqliteStore: synchronous must be 'normal' or 'full', got ${JSON.stringify(synchronous)}`);
  }

  const owned = options.filename !== undefined ? openNodeSqlite(options.filename) : undefined;
  const db: SqliteDatabaseLike = owned ?? (options.client as SqliteDatabaseLike);
  let sql: Record<keyof ReturnType<typeof statements>, SqliteStatementLike>;
  try {
    // busy_timeout first: the schema statements may have to wait for another process's writes.
    db.exec(`PRAGMA busy_timeout = ${busyTimeout}`);
    execWhileBusy(db, 'PRAGMA journal_mode = WAL', busyTimeout);
    // Checkpoints every 10,000 pages instead of 1,000: a checkpoint syncs the file, and at three pages
    // a delivery the default ran one every ~330 deliveries (claim + complete: 64–112 → 54–66 µs, 3 runs).
    db.exec('PRAGMA wal_autocheckpoint = 10000');
    db.exec(`PRAGMA synchronous = ${synchronous.toUpperCase()}`);
    // CREATE TABLE IF NOT EXISTS reads the schema, then writes: another process's write in between
    // gets the same immediate SQLITE_BUSY.
    execWhileBusy(db, schemaSql(options.table ?? DEFAULT_TABLE), busyTimeout);
    const text = statements(table);
    sql = {
      claim: db.prepare(text.claim),
      read: db.prepare(text.read),
      complete: db.prepare(text.complete),
      release: db.prepare(text.release),
      extend: db.prepare(text.extend),
      chunkEnd: db.prepare(text.chunkEnd),
      prune: db.prepare(text.prune),
    };
  } catch (error) {
    (owned as { close(): void } | undefined)?.close();
    throw error;
  }

  const changed = (statement: SqliteStatementLike, ...params: SqliteValue[]): boolean => Number(statement.run(...params).changes) === 1;

  function claim(key: string, token: string, leaseMs: number): ClaimResult {
    for (let tries = 0; tries < CLAIM_TRIES; tries++) {
      const now = Date.now();
      const end = now + leaseMs;
      const won = sql.claim.get(key, token, end, end + keep, now, now) as { attempt: number } | null | undefined;
      if (won != null) return { state: 'acquired', attempt: Number(won.attempt) };
      // A live lease or a retained completion: read which. Another process may have changed the row
      // in between (released, expired, pruned): then the claim is tried again.
      const row = sql.read.get(key) as { state: string; expires_at: number } | null | undefined;
      if (row == null) continue;
      const left = Number(row.expires_at) - Date.now();
      if (left <= 0) continue;
      if (row.state === 'c') return { state: 'completed' };
      if (row.state === 'l') return { state: 'in_progress', retryAfterMs: left };
    }
    throw new Error(`sqliteStore: the record of ${JSON.stringify(key)} kept changing under ${CLAIM_TRIES} claims in a row`);
  }

  let queue: Pending[] = [];
  let head = 0; // the queue's first operation not yet run: a large queue is walked, not copied again and again
  let scheduled = false;
  let closed = false;

  /**
   * One operation: `prepare` checks the arguments at once (a bad one is refused without waiting for
   * the turn to end) and gives the statements to run, which wait in the queue for the turn's commit.
   */
  function operation<T>(prepare: () => () => T): Promise<T> {
    if (closed) return Promise.reject(new Error('sqliteStore: the store is closed (close() closed its database)'));
    let run: () => T;
    try {
      run = prepare();
    } catch (error) {
      return Promise.reject(rejection(error));
    }
    return new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (value: never) => void, reject });
      if (!scheduled) {
        scheduled = true;
        nextTurn(flushTurn);
      }
    });
  }

  function nextBatch(): Pending[] {
    const end = Math.min(queue.length, head + BATCH_MAX);
    const batch = head === 0 && end === queue.length ? queue : queue.slice(head, end);
    head = end;
    if (head === queue.length) {
      queue = [];
      head = 0;
    }
    return batch;
  }

  function flushTurn(): void {
    scheduled = false;
    if (queue.length === 0) return; // close() ran them
    runBatch(nextBatch());
    // The rest a turn later: the write lock is released in between, and the answers go out.
    if (queue.length > 0 && !scheduled) {
      scheduled = true;
      nextTurn(flushTurn);
    }
  }

  /** Runs one operation in whatever transaction is open, or as its own; settles it at once. */
  function runAlone(op: Pending): void {
    try {
      op.resolve(op.run() as never);
    } catch (error) {
      op.reject(rejection(error));
    }
  }

  function rollback(): void {
    try {
      db.exec('ROLLBACK');
    } catch {
      // SQLite may have rolled the transaction back itself (a full disk, an I/O error): nothing is open.
    }
  }

  /** Never throws: every operation of the batch is settled, after the commit when there is one. */
  function runBatch(batch: Pending[]): void {
    // A lone operation is its own commit already: BEGIN and COMMIT would only add two statements.
    if (batch.length === 1) {
      runAlone(batch[0]!);
      return;
    }
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      if (isNestedBegin(error)) {
        // The application holds a transaction open on this connection across turns: the operations
        // join it, one by one, as they did before they were batched; its COMMIT is the application's.
        for (const op of batch) runAlone(op);
        return;
      }
      for (const op of batch) op.reject(error);
      return;
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    for (const op of batch) {
      try {
        outcomes.push({ ok: true, value: op.run() });
      } catch (error) {
        // A refused value aborts its statement only; anything else may have ended the transaction
        // (SQLite rolls back on some I/O and full-disk errors), so the batch as a whole is refused.
        if (isDataError(error)) {
          outcomes.push({ ok: false, value: rejection(error) });
          continue;
        }
        rollback();
        for (const each of batch) each.reject(error);
        return;
      }
    }
    try {
      db.exec('COMMIT');
    } catch (error) {
      rollback();
      for (const op of batch) op.reject(error);
      return;
    }
    for (let i = 0; i < batch.length; i++) {
      const { ok, value } = outcomes[i]!;
      if (ok) batch[i]!.resolve(value as never);
      else batch[i]!.reject(value);
    }
  }

  // Ordering guards' version records, in `<table>_versions` (versions.ts).
  const versions = versionRecords(db, options.table ?? DEFAULT_TABLE, operation, checkKey);

  function prune(): number {
    const now = Date.now();
    let deleted = 0;
    // The primary key, a chunk at a time: each chunk is one read, then one short write.
    for (let from = ''; ; ) {
      const last = (sql.chunkEnd.get(from, PRUNE_CHUNK) as { last: string | null } | null | undefined)?.last;
      if (last == null) return deleted + versions.prune();
      deleted += Number(sql.prune.run(from, last, now).changes);
      if (last === from) return deleted + versions.prune();
      from = last;
    }
  }

  const timer =
    pruneEvery > 0
      ? setInterval(() => {
          try {
            prune();
          } catch (error) {
            process.emitWarning(
              `sqliteStore: prune failed (${error instanceof Error ? error.message : String(error)}); it runs again later`,
            );
          }
        }, pruneEvery)
      : undefined;
  timer?.unref();

  return {
    table,
    claim: (key, token, leaseMs) =>
      operation(() => {
        checkKey(key);
        const lease = ms('leaseMs', leaseMs);
        return () => claim(key, token, lease);
      }),
    complete: (key, token, retentionMs) =>
      operation(() => {
        checkKey(key);
        const retention = ms('retentionMs', retentionMs);
        // The clock is read when the statement runs, at the end of the turn, as the claim's is.
        return () => {
          const end = Date.now() + retention;
          return changed(sql.complete, end, end, key, token);
        };
      }),
    release: (key, token) =>
      operation(() => {
        checkKey(key);
        return () => {
          const now = Date.now();
          return changed(sql.release, now, now + keep, key, token);
        };
      }),
    extend: (key, token, leaseMs) =>
      operation(() => {
        checkKey(key);
        const lease = ms('leaseMs', leaseMs);
        return () => {
          const end = Date.now() + lease;
          return changed(sql.extend, end, end + keep, key, token);
        };
      }),
    readVersion: versions.readVersion,
    advanceVersion: versions.advanceVersion,
    // Synchronous underneath (node:sqlite); a promise, as every store's prune() and close().
    prune: async () => prune(),
    async close() {
      if (timer !== undefined) clearInterval(timer);
      // What is queued is written before the database closes (or rejected, if it no longer can be).
      while (queue.length > 0) runBatch(nextBatch());
      if (owned !== undefined) {
        closed = true;
        owned.close();
      }
    },
  };
}
