import { randomBytes } from 'node:crypto';
import type { ClaimResult } from '@hookline/core';
import {
  batchQueue,
  DEFAULT_RETENTION_MS,
  positiveMs,
  refuseRenamedOptions,
  StoreDataError,
  type VersionedStore,
  wellFormedKey,
} from '@hookline/core/adapter';
import type { MysqlQueryable, MysqlValue } from './mysql-pool';
import { MAX_KEY_BYTES, MAX_TOKEN_BYTES, qualifiedTable, schemaSql, type TableLocation } from './schema';
import { MAX_CLAIM_BATCH, OUTCOME, PRUNE_CHUNK, statements } from './statements';
import { asStoreError, ER_LOCK_DEADLOCK, errno, rethrowStoreError } from './store-errors';
import { lendsConnections, mysqlTransaction } from './transaction';
import { versionRecords, versionsSchemaSql } from './versions';

/** Options of `mysqlStore()`. */
export interface MysqlStoreOptions extends TableLocation {
  /** A `mysql2/promise` Pool (preferably) or Connection. The store never ends it. */
  client: MysqlQueryable;
  /**
   * How long a lease or released row outlives its lease, so a later claim's `attempt` keeps counting
   * (the service's last retry comes about 31 h after the first). `prune()` deletes it afterwards.
   * @default 259_200_000 (72 h)
   */
  keepMs?: number;
  /**
   * Server-side prepared statements (`execute`, parsed once per connection); `false` sends every
   * statement as text (`query`), for proxies that cannot keep prepared statements. A prepared batch
   * is padded to one of a few sizes (powers of two up to `maxBatchSize`) so that a connection
   * prepares a handful of batch statements, not one per size.
   * @default true
   */
  preparedStatements?: boolean;
  /**
   * mysql2's per-statement timeout: a statement that has not answered by then fails (and mysql2
   * closes its connection), so a database that stops answering is an error, not a wait.
   * @default 5_000
   */
  statementTimeoutMs?: number;
  /**
   * Most claims, or completions, sent together in one statement (claims: at most 50). The claims that
   * arrive in one turn of the event loop leave together, and so do those that arrive while
   * `batchConcurrency` claim statements are running; completions the same: one round trip and one
   * commit for many deliveries. `1` sends each one alone.
   * @default 100
   */
  maxBatchSize?: number;
  /**
   * Most claim statements, and most completion statements, running at once; operations beyond wait
   * for the next batch. Each statement's commit waits for the redo log's flush, and statements that
   * commit together share one flush (group commit): where a flush is slow, more running at once
   * serve more deliveries. Keep twice this under the pool's `connectionLimit` (mysql2's default is 10).
   * @default 4
   */
  batchConcurrency?: number;
}

/** A MySQL store, plus its schema and housekeeping. */
export interface MysqlStore extends VersionedStore {
  /** `` `schema`.`table` `` as used in every statement. */
  readonly table: string;
  /** Creates the table and its index if they are absent (safe to run from every process at start-up). */
  setup(): Promise<void>;
  /** Deletes the rows nothing needs any more (see `keepMs`), in chunks; resolves how many. Run it from a cron or timer. */
  prune(): Promise<number>;
}

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`mysqlStore: ${name} must be a positive integer, got ${value}`);
  return value;
}

const ms = (name: string, value: number): number => Math.ceil(positiveMs('mysqlStore', name, value));

/** The UTF-8 bytes of a key or token, or a StoreDataError when the database could not hold it as itself. */
function bytes(what: 'key' | 'token', value: string, max: number): Buffer {
  const encoded = Buffer.from(wellFormedKey('mysqlStore', value, what), 'utf8');
  if (encoded.length > max) {
    throw new StoreDataError(`mysqlStore: the ${what} is ${encoded.length} bytes in UTF-8; the table holds at most ${max}`);
  }
  return encoded;
}

/**
 * The size a prepared batch of `n` (2 or more) is sent as: the next power of two, or `max`. A
 * prepared statement's text is fixed, so each size is one statement on each connection: padded, a
 * connection holds at most about 3 × log2(max) of them, where one per size would reach the server's
 * max_prepared_stmt_count (16,382 by default, shared by every connection) with a few processes.
 */
function paddedSize(n: number, max: number): number {
  let size = 2;
  while (size < n) size *= 2;
  return Math.min(size, max);
}

/** `items` and then copies of its last item, `size` in all. */
function padded<T>(items: T[], size: number): T[] {
  const last = items[items.length - 1] as T;
  return items.length >= size ? items : [...items, ...Array.from({ length: size - items.length }, () => last)];
}

const DEADLOCK_TRIES = 4;

/**
 * An idempotency store in MySQL 8 or MariaDB 10.11+, shared by every receiver process that uses the
 * same table. Every expiry on the database clock. A claim is one `INSERT … ON DUPLICATE KEY UPDATE`
 * whose assignments take the row only when its lease or retention ended, and which hands back what it
 * found through LAST_INSERT_ID (MySQL has no RETURNING); the row lock it takes makes concurrent claims
 * queue, so exactly one acquires. Under load, claims of new keys are inserted many to a statement, and
 * a key that had a row is then claimed alone. `complete`, `release` and `extend` are `UPDATE … WHERE`
 * the row still holds the caller's token. Errors reject the operation's promise, which the receiver
 * answers 503; a table or database that is not there (`setup()` never ran) rejects with a
 * `StoreNotSetUpError`, answered 500 CONFIGURATION_ERROR.
 *
 * @example
 * import mysql from 'mysql2/promise';
 * import { createReceiver } from '@hookline/core';
 * import { mysqlStore } from '@hookline/mysql';
 *
 * const store = mysqlStore({ client: mysql.createPool({ uri: process.env.MYSQL_URL, connectTimeout: 2_000 }) });
 * await store.setup();
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET!, store });
 */
export function mysqlStore(options: MysqlStoreOptions): MysqlStore {
  refuseRenamedOptions('mysqlStore', options, { pool: 'client', database: 'schema' });
  const { client: pool } = options;
  const table = qualifiedTable(options);
  const keep = ms('keepMs', options.keepMs ?? DEFAULT_RETENTION_MS);
  const timeout = ms('statementTimeoutMs', options.statementTimeoutMs ?? 5_000);
  const prepared = options.preparedStatements ?? true;
  const sql = statements(table);
  // A batch statement's text depends only on its size: built once per size, not once per batch.
  const bySize = (build: (n: number) => string) => {
    const built = new Map<number, string>();
    return (n: number): string => built.get(n) ?? built.set(n, build(n)).get(n)!;
  };
  const claimMany = bySize(sql.claimMany);
  const completeMany = bySize(sql.completeMany);
  const completedBy = bySize(sql.completedBy);
  const maxBatch = count('maxBatchSize', options.maxBatchSize ?? 100);
  const claimBatch = Math.min(maxBatch, MAX_CLAIM_BATCH);
  const concurrency = count('batchConcurrency', options.batchConcurrency ?? 4);

  // Padding only saves prepared statements: as text, a batch goes at its own size.
  const batchSize = (n: number, max: number): number => (prepared ? paddedSize(n, max) : n);

  /** Sends one statement, prepared unless `preparedStatements` is false. */
  const send = (text: string, values: MysqlValue[]) =>
    prepared ? pool.execute({ sql: text, timeout }, values) : pool.query({ sql: text, timeout }, values);

  /** Sends one statement that changes rows; resolves the OK packet's counts. */
  async function run(text: string, values: MysqlValue[]): Promise<{ affectedRows: number; insertId: number; info: string }> {
    for (let tries = 1; ; tries++) {
      try {
        const [result] = await send(text, values);
        const header = result as { affectedRows?: unknown; insertId?: unknown; info?: unknown };
        return {
          affectedRows: Number(header.affectedRows ?? 0),
          insertId: Number(header.insertId ?? 0),
          info: typeof header.info === 'string' ? header.info : '',
        };
      } catch (error) {
        // InnoDB may pick a claim of a brand-new key as a deadlock victim when others insert the same
        // key at once; the statement was rolled back whole, so it is sent again.
        if (errno(error) === ER_LOCK_DEADLOCK && tries < DEADLOCK_TRIES) continue;
        throw asStoreError(error);
      }
    }
  }

  interface Claim {
    key: Buffer;
    token: Buffer;
    lease: number;
  }
  async function claimAlone({ key, token, lease }: Claim): Promise<ClaimResult> {
    const { insertId } = await run(sql.claim, [key, token, lease, lease + keep, token, lease + keep, lease]);
    const kind = insertId % 4;
    const value = Math.floor(insertId / 4);
    if (kind === OUTCOME.acquired && value >= 1) return { state: 'acquired', attempt: value };
    if (kind === OUTCOME.inProgress && value >= 1) return { state: 'in_progress', retryAfterMs: value };
    if (kind === OUTCOME.completed) return { state: 'completed' };
    throw new Error(`mysqlStore: the claim of ${JSON.stringify(key.toString())} answered an outcome it cannot have (${insertId})`);
  }
  /**
   * Each claim's answer; for a key that had a row, the promise of its claim sent alone, which no longer
   * holds the batch's place (and whose failure is its own).
   */
  async function claims(items: Claim[]): Promise<(ClaimResult | Promise<ClaimResult>)[]> {
    const [one] = items;
    if (items.length === 1 && one !== undefined) return [await claimAlone(one)];
    // In index order, as InnoDB would lock them anyway: two batches never wait on each other in a cycle.
    const rows = [...items].sort((a, b) => Buffer.compare(a.key, b.key));
    const lease = rows[0]!.lease;
    // Padded with copies of the last row, which meet the row it inserted (or found) and change nothing:
    // each answers a 0 bit and counts as a duplicate.
    const size = batchSize(rows.length, claimBatch);
    const pads = size - rows.length;
    const values = padded(rows, size).flatMap((row) => [row.key, row.token, lease, lease + keep]);
    const { insertId, info } = await run(claimMany(size), values);
    const bits = Math.floor(insertId / 2 ** pads);
    const inserted = rows.map((_, i) => Math.floor(bits / 2 ** (rows.length - 1 - i)) % 2 === 1);
    // The server also counts the rows that were there already ("Duplicates: N"): a server that wrote
    // the rows in another order than the bits assume would be found out here, and fail closed.
    const duplicates = /Duplicates: (\d+)/.exec(info)?.[1];
    if (
      !Number.isSafeInteger(insertId) ||
      insertId < 0 ||
      insertId >= 2 ** size ||
      insertId % 2 ** pads !== 0 ||
      (duplicates !== undefined && Number(duplicates) !== pads + inserted.filter((bit) => !bit).length)
    ) {
      throw new Error(`mysqlStore: a batch of ${rows.length} claims answered an outcome it cannot have (${insertId}, ${info})`);
    }
    // A new key was acquired by the batch; a key that already had a row is claimed again alone.
    const answers = new Map<Claim, ClaimResult | Promise<ClaimResult>>();
    for (const [i, row] of rows.entries()) answers.set(row, inserted[i] ? { state: 'acquired', attempt: 1 } : claimAlone(row));
    return items.map((item) => answers.get(item)!);
  }
  const claimQueued =
    maxBatch === 1
      ? claimAlone
      : batchQueue({
          run: claims,
          keyOf: (item: Claim) => item.key.toString('latin1'),
          groupOf: (item: Claim) => item.lease,
          maxSize: claimBatch,
          concurrency,
        });
  async function claim(key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    const k = bytes('key', key, MAX_KEY_BYTES);
    const t = bytes('token', token, MAX_TOKEN_BYTES);
    // A batch's error reaches each of its claims as the driver gave it: mapped here.
    return await claimQueued({ key: k, token: t, lease: ms('leaseMs', leaseMs) }).catch(rethrowStoreError);
  }

  const owned = (key: string, token: string) => [bytes('key', key, MAX_KEY_BYTES), bytes('token', token, MAX_TOKEN_BYTES)];

  interface Completion {
    key: Buffer;
    token: Buffer;
    retention: number;
  }
  async function completions(items: Completion[]): Promise<boolean[]> {
    const [one] = items;
    if (items.length === 1 && one !== undefined) {
      return [(await run(sql.complete, [one.retention, one.retention, one.key, one.token])).affectedRows === 1];
    }
    // InnoDB locks the rows in index order whatever the list's order, so no two batches deadlock.
    const marker = randomBytes(8);
    const retention = items[0]!.retention;
    const keys = items.map((item) => item.key);
    // Padded with the last key and pair again: an IN list's repeats select no row twice.
    const sent = padded(items, batchSize(items.length, maxBatch));
    const paddedKeys = sent.map((item) => item.key);
    const pairs = sent.flatMap((item) => [item.key, item.token]);
    const { affectedRows } = await run(completeMany(sent.length), [marker, retention, retention, ...paddedKeys, ...pairs]);
    if (affectedRows === items.length) return items.map(() => true);
    const [rows] = await send(completedBy(sent.length), [...paddedKeys, marker]);
    const done = new Set((rows as { k: Buffer }[]).map((row) => Buffer.from(row.k).toString('hex')));
    return keys.map((key) => done.has(key.toString('hex')));
  }
  const complete =
    maxBatch === 1
      ? async (item: Completion) => (await completions([item]))[0]!
      : batchQueue({
          run: completions,
          keyOf: (item: Completion) => item.key.toString('latin1'),
          groupOf: (item: Completion) => item.retention,
          maxSize: maxBatch,
          concurrency,
        });

  // Ordering guards' version records, in `<table>_versions` (versions.ts); transactional handlers
  // with a Pool (transaction.ts).
  const versions = versionRecords({ pool, location: options, prepared, timeout, keyBytes: (key) => bytes('key', key, MAX_KEY_BYTES) });
  const transaction = lendsConnections(pool)
    ? {
        transaction: mysqlTransaction(
          pool,
          {
            complete: (key, token, retentionMs) => {
              const retention = ms('retentionMs', retentionMs);
              return { sql: sql.complete, values: [retention, retention, ...owned(key, token)] };
            },
            advance: versions.advanceQuery,
          },
          timeout,
        ),
      }
    : {};

  return {
    table,
    claim,
    readVersion: versions.readVersion,
    advanceVersion: versions.advanceVersion,
    ...transaction,
    async complete(key, token, retentionMs) {
      const retention = ms('retentionMs', retentionMs);
      return complete({ key: bytes('key', key, MAX_KEY_BYTES), token: bytes('token', token, MAX_TOKEN_BYTES), retention }).catch(
        rethrowStoreError,
      );
    },
    async release(key, token) {
      return (await run(sql.release, [keep, ...owned(key, token)])).affectedRows === 1;
    },
    async extend(key, token, leaseMs) {
      const lease = ms('leaseMs', leaseMs);
      return (await run(sql.extend, [lease + keep, lease, ...owned(key, token)])).affectedRows === 1;
    },
    async setup() {
      await pool.query({ sql: schemaSql(options), timeout: Math.max(timeout, 30_000) });
      await pool.query({ sql: versionsSchemaSql(options), timeout: Math.max(timeout, 30_000) });
    },
    async prune() {
      let deleted = 0;
      for (;;) {
        const { affectedRows } = await run(sql.prune, []);
        deleted += affectedRows;
        if (affectedRows < PRUNE_CHUNK) return deleted + (await versions.prune());
      }
    },
  };
}
