// The Postgres store's options: durations refused before anything is sent, named prepared statements
// (and none when turned off), batches capped by maxBatchSize and batchConcurrency, batches of one,
// and lockTimeoutMs 0 (the server's own lock_timeout), each still keeping the contract. Every store
// here is built inside its test.
import { randomUUID } from 'node:crypto';
import { requireServer } from '@hookline/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_opt_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const LONG_MS = 60_000;

/** A pool that lists the statements it was asked to run, and counts how many run at once. */
function loggingPool(max = 4) {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max });
  const sent: string[] = [];
  const batches: number[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const logged = new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return async (config: { text: string; values?: unknown[] }, ...rest: unknown[]) => {
        sent.push(config.text);
        const [keys] = config.values ?? [];
        batches.push(Array.isArray(keys) ? keys.length : 1);
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        try {
          return await (target.query as (...a: unknown[]) => Promise<unknown>)(config, ...rest);
        } finally {
          running--;
        }
      };
    },
  });
  return { pool: logged, sent, batches, mostAtOnce: () => mostAtOnce };
}

describe.skipIf(!server.reachable)('postgresStore options', () => {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  beforeAll(() => postgresStore({ client: admin, schema }).setup());
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  it('with maxBatchSize 1, sends each claim and completion as a statement of its own, answered as its own', async () => {
    const { pool, sent } = loggingPool();
    const store = postgresStore({ client: pool, schema, maxBatchSize: 1 });
    try {
      const keys = Array.from({ length: 6 }, (_, i) => `one-by-one:${i}:wdl_${randomUUID()}`);
      const tokens = keys.map(() => randomUUID());
      const claims = await Promise.all(keys.map((key, i) => store.claim(key, tokens[i] as string, LONG_MS)));
      expect(claims).toEqual(keys.map(() => ({ state: 'acquired', attempt: 1 })));
      const completed = await Promise.all(
        keys.map((key, i) => store.complete(key, i % 2 === 0 ? (tokens[i] as string) : 'other', LONG_MS)),
      );
      expect(completed).toEqual(keys.map((_, i) => i % 2 === 0));
      // One statement per operation, never the batch form (unnest over arrays).
      expect(sent).toHaveLength(keys.length * 2);
      expect(sent.some((text) => text.includes('unnest('))).toBe(false);
    } finally {
      await pool.end();
    }
  });

  it("with lockTimeoutMs 0, claims alone and in batches run under the server's own lock_timeout", async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    const store = postgresStore({ client: pool, schema, lockTimeoutMs: 0 });
    try {
      const alone = `no-bound:wdl_${randomUUID()}`;
      const token = randomUUID();
      expect(await store.claim(alone, token, LONG_MS)).toEqual({ state: 'acquired', attempt: 1 });
      expect(await store.complete(alone, token, LONG_MS)).toBe(true);
      const together = Array.from({ length: 4 }, (_, i) => `no-bound:${i}:wdl_${randomUUID()}`);
      const claims = await Promise.all(together.map((key) => store.claim(key, randomUUID(), LONG_MS)));
      expect(claims).toEqual(together.map(() => ({ state: 'acquired', attempt: 1 })));
      expect(await store.claim(alone, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
    } finally {
      await pool.end();
    }
  });

  it('refuses durations that are not positive numbers of milliseconds, naming the option, before sending anything', async () => {
    const { pool, sent } = loggingPool();
    try {
      for (const keepMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '1000' as unknown as number]) {
        expect(() => postgresStore({ client: pool, schema, keepMs })).toThrow(
          new RangeError(`postgresStore: keepMs must be a positive number of milliseconds, got ${keepMs}`),
        );
      }
      const store = postgresStore({ client: pool, schema });
      for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '1000' as unknown as number]) {
        await expect(store.claim(`refused:wdl_${randomUUID()}`, 't', bad)).rejects.toThrow(
          `postgresStore: leaseMs must be a positive number of milliseconds, got ${bad}`,
        );
        await expect(store.extend(`refused:wdl_${randomUUID()}`, 't', bad)).rejects.toThrow(
          `postgresStore: leaseMs must be a positive number of milliseconds, got ${bad}`,
        );
        await expect(store.complete(`refused:wdl_${randomUUID()}`, 't', bad)).rejects.toThrow(
          `postgresStore: retentionMs must be a positive number of milliseconds, got ${bad}`,
        );
      }
      expect(sent).toEqual([]);
      expect(() => postgresStore({ client: pool, schema, maxBatchSize: 1 })).not.toThrow();
      expect(() => postgresStore({ client: pool, schema, batchConcurrency: 0 })).toThrow(
        new RangeError('postgresStore: batchConcurrency must be a positive integer, got 0'),
      );
    } finally {
      await pool.end();
    }
  });

  it('parses each statement once per connection under a name of its own (hookline_<kind>_<hash>), and names none with preparedStatements: false', async () => {
    const prepared = async (preparedStatements: boolean | undefined) => {
      // One connection, so the statements the store ran are the ones this session holds.
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      try {
        const store = postgresStore({ client: pool, schema, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
        const key = `prepared:wdl_${randomUUID()}`;
        const token = randomUUID();
        await store.claim(key, token, LONG_MS);
        await store.extend(key, token, LONG_MS);
        await store.complete(key, token, LONG_MS);
        await store.readVersion(key);
        await store.advanceVersion(key, 1, LONG_MS);
        const { rows } = await pool.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'hookline%' ORDER BY name");
        return rows.map((row: { name: string }) => row.name.replace(/_[0-9a-f]{16}$/, '_<hash>'));
      } finally {
        await pool.end();
      }
    };
    const named = [
      'hookline_claimOne_<hash>',
      'hookline_completeOne_<hash>',
      'hookline_extend_<hash>',
      'hookline_version_advance_<hash>',
      'hookline_version_read_<hash>',
    ];
    expect(await prepared(undefined)).toEqual(named);
    expect(await prepared(true)).toEqual(named);
    expect(await prepared(false)).toEqual([]);
  });

  it('never runs more claim statements at once than batchConcurrency, nor more keys in one than maxBatchSize', async () => {
    const { pool, batches, mostAtOnce } = loggingPool(8);
    const store = postgresStore({ client: pool, schema, maxBatchSize: 5, batchConcurrency: 1 });
    try {
      const keys = Array.from({ length: 40 }, (_, i) => `capped:${i}:wdl_${randomUUID()}`);
      const claims = await Promise.all(keys.map((key) => store.claim(key, randomUUID(), LONG_MS)));
      expect(claims).toEqual(keys.map(() => ({ state: 'acquired', attempt: 1 })));
      expect(mostAtOnce()).toBe(1);
      expect(Math.max(...batches)).toBe(5);
      expect(batches.reduce((sum, n) => sum + n, 0)).toBe(keys.length);
    } finally {
      await pool.end();
    }
  });

  it("with lockTimeoutMs 0, a claim blocked by a row lock gives up after the server's own lock_timeout", async () => {
    // The sessions' lock_timeout is set on the connection, as a server or role setting would be.
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2, options: '-c lock_timeout=200' });
    const store = postgresStore({ client: pool, schema, lockTimeoutMs: 0 });
    const holder = await admin.connect();
    try {
      const key = `server-bound:wdl_${randomUUID()}`;
      expect(await store.claim(key, randomUUID(), LONG_MS)).toEqual({ state: 'acquired', attempt: 1 });
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".hookline_idempotency WHERE key = $1 FOR UPDATE`, [key]);
      const blocked = await Promise.resolve(store.claim(key, randomUUID(), LONG_MS)).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((blocked as { code?: string }).code).toBe('55P03'); // lock_not_available
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
      await pool.end();
    }
  });
});
