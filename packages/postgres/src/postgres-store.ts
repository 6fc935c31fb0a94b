import { createHash } from 'node:crypto';
import type { ClaimResult } from '@hookline/core';
import { batchQueue, DEFAULT_RETENTION_MS, positiveMs, refuseRenamedOptions, type VersionedStore } from '@hookline/core/adapter';
import { asStoreError, checkKey, isDataException, rethrowStoreError } from './data-errors';
import type { PgPoolLike } from './pg-pool';
import { qualifiedTable, qualifiedVersionsTable, schemaSql, type TableLocation } from './schema';
import { statements } from './statements';
import { lendsConnections, pgTransaction } from './transaction';
import { versionRecords } from './versions';

/** Options of `postgresStore()`. */
export interface PostgresStoreOptions extends TableLocation {
  /** A `pg` Pool (preferably) or Client. The store never ends it. */
  client: PgPoolLike;
  /**
   * How long a lease or released row outlives its lease, so a later claim's `attempt` keeps counting
   * (the service's last retry comes about 31 h after the first). `prune()` deletes it afterwards.
   * @default 259_200_000 (72 h)
   */
  keepMs?: number;
  /**
   * Use named prepared statements (parsed once per connection). Turn off behind a pooler that cannot
   * keep them, such as PgBouncer in transaction mode before 1.21.
   * @default true
   */
  preparedStatements?: boolean;
  /**
   * Most claims (or completions) sent together in one statement. Under load, the operations that
   * arrive while `batchConcurrency` statements of their kind are running leave together when one
   * comes back: one round trip and one commit for many deliveries. `1` sends each one alone.
   * @default 100
   */
  maxBatchSize?: number;
  /**
   * Most claim statements (and, separately, completion statements) running at once; operations
   * beyond wait for the next batch. Keep twice this under the Pool's `max`, for `extend` and
   * `release` and your own queries.
   * @default 2
   */
  batchConcurrency?: number;
  /**
   * Longest a claim waits for a row lock another transaction holds (a stray `SELECT … FOR UPDATE`, a
   * long migration) before failing with SQLSTATE 55P03, which the receiver answers 503 (nothing ran,
   * the service retries). Set inside the claim statement (`set_config('lock_timeout', …, true)`), so
   * it costs no round trip; keep it under the receiver's `storeTimeoutMs`, so the database gives up
   * before the receiver does and no blocked claim holds a connection past its answer. Completions
   * wait for the lock instead (they record work already done). `0` leaves the server's `lock_timeout`.
   * @default 4_000
   */
  lockTimeoutMs?: number;
}

/** A Postgres store, plus its schema and housekeeping. */
export interface PostgresStore extends VersionedStore {
  /** `"schema"."table"` as used in every statement. */
  readonly table: string;
  /** Creates the schema, table and index if they are absent (safe to run from every process at start-up). */
  setup(): Promise<void>;
  /** Deletes the rows nothing needs any more (see `keepMs`); resolves how many. Run it from a cron or timer. */
  prune(): Promise<number>;
}

const ms = (name: string, value: number): number => positiveMs('postgresStore', name, value);

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`postgresStore: ${name} must be a positive integer, got ${value}`);
  return value;
}

interface ClaimRow {
  key: string;
  state: string;
  attempt: number;
  mine: boolean;
  left_ms: number;
}

function claimResult(row: ClaimRow): ClaimResult {
  if (row.state === 'c') return { state: 'completed' };
  if (row.mine) return { state: 'acquired', attempt: row.attempt };
  return { state: 'in_progress', retryAfterMs: Math.max(1, row.left_ms) };
}

interface Operation {
  key: string;
  token: string;
  ms: number;
}

/**
 * An idempotency store in PostgreSQL, shared by every receiver process that uses the same table.
 * Every expiry on the database clock (`statement_timestamp()`). A claim is an `INSERT … ON CONFLICT
 * DO UPDATE` that returns exactly one row per key: the conflicting row is locked, then rewritten
 * either as our lease (when free) or as itself, and the returned row tells which. Under load, claims
 * (and completions) that arrive together share one statement and one commit. Errors reject the
 * operation's promise, which the receiver answers 503 (the service retries); a key the database
 * refuses (a data error) rejects with a `StoreDataError`, answered 500, and a table or schema that is
 * not there (`setup()` never ran) with a `StoreNotSetUpError`, answered 500 CONFIGURATION_ERROR.
 *
 * @example
 * import pg from 'pg';
 * import { createReceiver } from '@hookline/core';
 * import { postgresStore } from '@hookline/postgres';
 *
 * const store = postgresStore({ client: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * await store.setup();
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET!, store });
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  refuseRenamedOptions('postgresStore', options, { pool: 'client' });
  const { client: pool } = options;
  const table = qualifiedTable(options);
  const keep = ms('keepMs', options.keepMs ?? DEFAULT_RETENTION_MS);
  const maxSize = count('maxBatchSize', options.maxBatchSize ?? 100);
  const concurrency = count('batchConcurrency', options.batchConcurrency ?? 2);
  const lockTimeoutMs = options.lockTimeoutMs ?? 4_000;
  if (!Number.isInteger(lockTimeoutMs) || lockTimeoutMs < 0) {
    throw new RangeError(`postgresStore: lockTimeoutMs must be a whole number of milliseconds (0: the server's), got ${lockTimeoutMs}`);
  }
  const sql = statements(table, lockTimeoutMs);
  const prepared = options.preparedStatements ?? true;
  // Named statements are per connection and per text: the name carries a hash of the text.
  const named = (kind: keyof typeof sql): { name?: string; text: string } => {
    const text = sql[kind];
    if (!prepared) return { text };
    return { name: `hookline_${kind}_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
  };
  const q = {
    claimOne: named('claimOne'),
    claimMany: named('claimMany'),
    completeOne: named('completeOne'),
    completeMany: named('completeMany'),
    release: named('release'),
    extend: named('extend'),
  };

  const columns = (items: Operation[]) => [items.map((o) => o.key), items.map((o) => o.token), items.map((o) => o.ms)];

  // A data error of a lone operation is its key's fault: a StoreDataError (the receiver answers 500,
  // not 503 "unavailable"). A batch's is first retried item by item (batchQueue in @hookline/core/adapter).
  const one = async <T>(query: Promise<T>): Promise<T> => {
    try {
      return await query;
    } catch (error) {
      throw asStoreError(error);
    }
  };

  async function claims(items: Operation[]): Promise<ClaimResult[]> {
    const [first] = items;
    const result =
      items.length === 1 && first !== undefined
        ? await one(pool.query({ ...q.claimOne, values: [first.key, first.token, first.ms, keep] }))
        : await pool.query({ ...q.claimMany, values: [...columns(items), keep] });
    const rows = new Map((result.rows as ClaimRow[]).map((row) => [row.key, row]));
    return items.map((item) => {
      const row = rows.get(item.key);
      if (row === undefined) throw new Error(`postgresStore: the claim of ${JSON.stringify(item.key)} returned no row`);
      return claimResult(row);
    });
  }

  async function completions(items: Operation[]): Promise<boolean[]> {
    const [first] = items;
    if (items.length === 1 && first !== undefined) {
      const result = await one(pool.query({ ...q.completeOne, values: [first.key, first.token, first.ms] }));
      return [result.rowCount === 1];
    }
    const result = await pool.query({ ...q.completeMany, values: columns(items) });
    const done = new Set((result.rows as { key: string }[]).map((row) => row.key));
    return items.map((item) => done.has(item.key));
  }

  // With batches of one, every operation goes straight to the pool, as one statement each.
  const queue = <O>(run: (items: Operation[]) => Promise<O[]>): ((item: Operation) => Promise<O>) =>
    maxSize === 1
      ? async (item) => (await run([item]))[0] as O
      : batchQueue({ run, keyOf: (item) => item.key, maxSize, concurrency, isItemFault: isDataException });
  const claim = queue(claims);
  const complete = queue(completions);
  const versions = versionRecords(
    pool,
    () => qualifiedVersionsTable(options),
    (kind, text) =>
      prepared ? { name: `hookline_${kind}_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text } : { text },
  );
  // Transactional handlers need connections to lend: offered with a pg Pool, not with a lone Client.
  const transaction = lendsConnections(pool) ? { transaction: pgTransaction(pool, () => q.completeOne, versions.advanceQuery) } : {};

  return {
    table,
    // A batch's error reaches each of its operations as the driver gave it: mapped here.
    async claim(key, token, leaseMs) {
      return claim({ key: checkKey(key), token, ms: ms('leaseMs', leaseMs) }).catch(rethrowStoreError);
    },
    async complete(key, token, retentionMs) {
      return complete({ key: checkKey(key), token, ms: ms('retentionMs', retentionMs) }).catch(rethrowStoreError);
    },
    async release(key, token) {
      const result = await one(pool.query({ ...q.release, values: [checkKey(key), token, keep] }));
      return result.rowCount === 1;
    },
    async extend(key, token, leaseMs) {
      const result = await one(pool.query({ ...q.extend, values: [checkKey(key), token, ms('leaseMs', leaseMs), keep] }));
      return result.rowCount === 1;
    },
    async setup() {
      // One simple-protocol query = one implicit transaction; the advisory lock serialises processes
      // starting together (concurrent CREATE … IF NOT EXISTS can otherwise fail on the catalog).
      await pool.query({
        text: `SELECT pg_advisory_xact_lock(hashtext(${quoteLiteral(`hookline:${table}`)}));\n${schemaSql(options)}`,
      });
    },
    async prune() {
      const result = await pool.query({ text: sql.prune });
      return (result.rowCount ?? 0) + (await versions.prune());
    },
    readVersion: versions.readVersion,
    advanceVersion: versions.advanceVersion,
    ...transaction,
  };
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
