import { createHash } from 'node:crypto';
import type { ClaimResult, IdempotencyStore } from '@hookline/core';
import type { PgQueryable } from './pg-pool';
import { qualifiedTable, schemaSql, type TableLocation } from './schema';

/** Options of `postgresStore()`. */
export interface PostgresStoreOptions extends TableLocation {
  /** A `pg` Pool (preferably) or Client. The store never ends it. */
  pool: PgQueryable;
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
}

/** A Postgres store, plus its schema and housekeeping. */
export interface PostgresStore extends IdempotencyStore {
  /** `"schema"."table"` as used in every statement. */
  readonly table: string;
  /** Creates the schema, table and index if they are absent (safe to run from every process at start-up). */
  ensureSchema(): Promise<void>;
  /** Deletes the rows nothing needs any more (see `keepMs`); resolves how many. Run it from a cron or timer. */
  prune(): Promise<number>;
}

// Milliseconds → interval, for durations past 2^31 ms too (float8 holds every integer up to 2^53).
const MS = (param: string): string => `(${param}::float8 * interval '1 millisecond')`;
const NOW = 'statement_timestamp()';

/** Builds the four statements for one table. */
function statements(table: string) {
  // A row is free to claim once its lease or retention ended (`expires_at`; a released row's is the
  // release time) or it outlived `purge_at`. Its attempt count starts over when it is a completion
  // whose retention ended, or a row old enough to have been pruned.
  const free = `(r.expires_at <= ${NOW} OR r.purge_at <= ${NOW})`;
  const fresh = `(r.state = 'c' OR r.purge_at <= ${NOW})`;
  const leaseEnd = `${NOW} + ${MS('$3')}`;
  const claim = `INSERT INTO ${table} AS r (key, state, token, attempt, expires_at, purge_at)
VALUES ($1::text, 'l', $2::text, 1, ${leaseEnd}, ${leaseEnd} + ${MS('$4')})
ON CONFLICT (key) DO UPDATE SET
  state      = CASE WHEN ${free} THEN 'l' ELSE r.state END,
  token      = CASE WHEN ${free} THEN EXCLUDED.token ELSE r.token END,
  attempt    = CASE WHEN ${free} THEN (CASE WHEN ${fresh} THEN 1 ELSE r.attempt + 1 END) ELSE r.attempt END,
  expires_at = CASE WHEN ${free} THEN EXCLUDED.expires_at ELSE r.expires_at END,
  purge_at   = CASE WHEN ${free} THEN EXCLUDED.purge_at ELSE r.purge_at END
RETURNING r.state,
  r.attempt,
  (r.token = $2::text AND r.expires_at = ${leaseEnd}) AS mine,
  ceil(extract(epoch FROM r.expires_at - ${NOW}) * 1000)::float8 AS left_ms`;
  const owned = `key = $1::text AND state = 'l' AND token = $2::text AND expires_at > ${NOW}`;
  return {
    claim,
    complete: `UPDATE ${table} SET state = 'c', token = NULL, expires_at = ${NOW} + ${MS('$3')}, purge_at = ${NOW} + ${MS('$3')} WHERE ${owned}`,
    release: `UPDATE ${table} SET state = 'r', token = NULL, expires_at = ${NOW}, purge_at = ${NOW} + ${MS('$3')} WHERE ${owned}`,
    extend: `UPDATE ${table} SET expires_at = ${leaseEnd}, purge_at = GREATEST(purge_at, ${leaseEnd} + ${MS('$4')}) WHERE ${owned}`,
    prune: `DELETE FROM ${table} WHERE purge_at <= ${NOW}`,
  };
}

function ms(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`postgresStore: ${name} must be a positive number of milliseconds, got ${value}`);
  }
  return value;
}

interface ClaimRow {
  state: string;
  attempt: number;
  mine: boolean;
  left_ms: number;
}

/**
 * An idempotency store in PostgreSQL, shared by every receiver process that uses the same table.
 * One statement per operation, every expiry on the database clock (`statement_timestamp()`). The claim
 * is a single `INSERT … ON CONFLICT DO UPDATE` that always returns exactly one row: the conflicting row
 * is locked, then rewritten either as our lease (when free) or as itself, and the returned row tells
 * which. Errors reject the operation's promise, which the receiver answers 503 (the service retries).
 *
 * @example
 * import pg from 'pg';
 * import { createReceiver } from '@hookline/core';
 * import { postgresStore } from '@hookline/postgres';
 *
 * const store = postgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * await store.ensureSchema();
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET!, store });
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const { pool } = options;
  const table = qualifiedTable(options);
  const keep = ms('keepMs', options.keepMs ?? 72 * 3_600_000);
  const sql = statements(table);
  const prepared = options.preparedStatements ?? true;
  // Named statements are per connection and per text: the name carries a hash of the text.
  const named = (kind: keyof typeof sql): { name?: string; text: string } => {
    const text = sql[kind];
    if (!prepared) return { text };
    return { name: `hookline_${kind}_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
  };
  const q = { claim: named('claim'), complete: named('complete'), release: named('release'), extend: named('extend') };

  return {
    table,
    async claim(key, token, leaseMs): Promise<ClaimResult> {
      const result = await pool.query({ ...q.claim, values: [key, token, ms('leaseMs', leaseMs), keep] });
      const row = result.rows[0] as ClaimRow | undefined;
      if (row === undefined) throw new Error(`postgresStore: the claim of ${JSON.stringify(key)} returned no row`);
      if (row.state === 'c') return { state: 'completed' };
      if (row.mine) return { state: 'acquired', attempt: row.attempt };
      return { state: 'in_progress', retryAfterMs: Math.max(1, row.left_ms) };
    },
    async complete(key, token, retentionMs) {
      const result = await pool.query({ ...q.complete, values: [key, token, ms('retentionMs', retentionMs)] });
      return result.rowCount === 1;
    },
    async release(key, token) {
      const result = await pool.query({ ...q.release, values: [key, token, keep] });
      return result.rowCount === 1;
    },
    async extend(key, token, leaseMs) {
      const result = await pool.query({ ...q.extend, values: [key, token, ms('leaseMs', leaseMs), keep] });
      return result.rowCount === 1;
    },
    async ensureSchema() {
      // One simple-protocol query = one implicit transaction; the advisory lock serialises processes
      // starting together (concurrent CREATE … IF NOT EXISTS can otherwise fail on the catalog).
      await pool.query({
        text: `SELECT pg_advisory_xact_lock(hashtext(${quoteLiteral(`hookline:${table}`)}));\n${schemaSql(options)}`,
      });
    },
    async prune() {
      const result = await pool.query({ text: sql.prune });
      return result.rowCount ?? 0;
    },
  };
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
