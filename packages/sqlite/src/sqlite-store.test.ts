import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreDataError } from '@hookline/core/adapter';
import { describeStoreConformance } from '@hookline/testing/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { loadNodeSqlite, type SqliteDatabaseLike } from './database';
import { SCHEMA_SQL, schemaSql } from './schema';
import { sqliteStore } from './sqlite-store';

type Closable = SqliteDatabaseLike & { close(): void };

const dir = mkdtempSync(join(tmpdir(), 'hookline-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name = 'store') => join(dir, `${name}-${randomUUID()}.db`);

// Which drivers run depends on the Node major, as CI's matrix intends: Node 20 has no node:sqlite and
// runs the better-sqlite3 path (its binary is built for the Node that installed it); Node 22.13+ runs
// node:sqlite, and better-sqlite3 too where its binary matches this Node.
const nodeSqlite = loadNodeSqlite();
const BetterSqlite = (() => {
  try {
    const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Closable;
    new Database(':memory:').close(); // loads the native binary
    return Database;
  } catch (error) {
    if (nodeSqlite === undefined) throw new Error(`better-sqlite3 must load where node:sqlite is missing: ${String(error)}`);
    console.warn(`better-sqlite3 does not load on Node ${process.version} (${String(error).split('\n')[0]}): node:sqlite only`);
    return undefined;
  }
})();

const drivers: { name: string; open: (path: string) => Closable }[] = [];
if (nodeSqlite) drivers.push({ name: 'node:sqlite', open: (path) => new nodeSqlite.DatabaseSync(path) });
if (BetterSqlite) drivers.push({ name: 'better-sqlite3', open: (path) => new BetterSqlite(path) });

describe('schema', () => {
  it('ships schema.sql with the same text as SCHEMA_SQL', () => {
    expect(readFileSync(new URL('./schema.sql', import.meta.url), 'utf8')).toBe(SCHEMA_SQL);
  });

  it('refuses table names that are not plain identifiers', () => {
    expect(() => schemaSql('x"; DROP TABLE y; --')).toThrow(/plain identifier/);
    const db = drivers[0]!.open(':memory:');
    try {
      expect(() => sqliteStore({ client: db, table: 'a.b' })).toThrow(/plain identifier/);
    } finally {
      db.close();
    }
  });

  it('takes either filename or client, and says which Node has node:sqlite', async () => {
    expect(() => sqliteStore({})).toThrow(/either `filename`/);
    expect(() => sqliteStore({ database: {} } as never)).toThrow(new TypeError('sqliteStore: `database` is now `client`'));
    if (nodeSqlite === undefined) {
      // The option it names is the one that exists: `client` (`database` is refused as renamed).
      expect(() => sqliteStore({ filename: file() })).toThrow(
        /has no node:sqlite.*as `client` instead of `filename`: sqliteStore\(\{ client: new Database\('\.\/hookline\.db'\) \}\)/,
      );
    } else {
      const store = sqliteStore({ filename: file() });
      expect(await store.claim('k', 't', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
      await store.close();
    }
  });
});

for (const driver of drivers) {
  describe(`sqliteStore over ${driver.name}`, () => {
    const path = file(driver.name.replace(':', '-'));

    describeStoreConformance(
      `sqliteStore (${driver.name})`,
      () => {
        const db = driver.open(path);
        let closed = false;
        return {
          store: sqliteStore({ client: db, pruneEveryMs: 0 }),
          breakBackend: () => {
            closed = true;
            db.close();
          },
          cleanup: () => {
            if (!closed) db.close();
          },
        };
      },
      {
        rounds: 5,
        versions: true,
        // The store makes its tables when it opens: these were dropped after it did.
        notSetUp: async () => {
          const db = driver.open(':memory:');
          const store = sqliteStore({ client: db, table: 'dropped', pruneEveryMs: 0 });
          await store.advanceVersion?.('made:wdl_1', 1, 60_000); // the version table exists too
          db.exec('DROP TABLE dropped; DROP TABLE dropped_versions');
          return { store, cleanup: () => db.close() };
        },
      },
    );

    it('puts the file in WAL mode, synchronous NORMAL unless asked for FULL, with the busy timeout asked for', () => {
      const db = driver.open(path);
      try {
        sqliteStore({ client: db, busyTimeoutMs: 1_234, pruneEveryMs: 0 });
        expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
        expect(Object.values(db.prepare('PRAGMA busy_timeout').get() as object)).toEqual([1_234]);
        expect(db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 1 }); // NORMAL
        sqliteStore({ client: db, synchronous: 'full', pruneEveryMs: 0 });
        expect(db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 2 });
      } finally {
        db.close();
      }
    });

    it('keeps every record across a restart: a completion is still a duplicate, a lease still held', async () => {
      const first = driver.open(path);
      const store = sqliteStore({ client: first, pruneEveryMs: 0 });
      const [done, busy] = [`restart:wdl_${randomUUID()}`, `restart:wdl_${randomUUID()}`];
      expect(await store.claim(done, 'a', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
      expect(await store.complete(done, 'a', 60_000)).toBe(true);
      expect(await store.claim(busy, 'b', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
      first.close();
      const second = driver.open(path);
      try {
        const again = sqliteStore({ client: second, pruneEveryMs: 0 });
        expect(await again.claim(done, 'c', 60_000)).toEqual({ state: 'completed' });
        expect(await again.claim(busy, 'c', 60_000)).toMatchObject({ state: 'in_progress' });
        expect(await again.complete(busy, 'b', 60_000)).toBe(true);
      } finally {
        second.close();
      }
    });

    it('lets an owner finish past its lease while no other claim took the key over; after one, never', async () => {
      const db = driver.open(path);
      try {
        const store = sqliteStore({ client: db, pruneEveryMs: 0 });
        const [k1, k2] = [`late:wdl_${randomUUID()}`, `late:wdl_${randomUUID()}`];
        await store.claim(k1, 'slow', 1);
        await store.claim(k2, 'slow', 1);
        const until = Date.now() + 5;
        while (Date.now() < until); // both leases end
        expect(await store.extend(k1, 'slow', 60_000)).toBe(true);
        expect(await store.complete(k1, 'slow', 60_000)).toBe(true);
        expect(await store.claim(k2, 'fast', 60_000)).toEqual({ state: 'acquired', attempt: 2 });
        expect(await store.complete(k2, 'slow', 60_000)).toBe(false);
        expect(await store.release(k2, 'slow')).toBe(false);
        expect(await store.complete(k2, 'fast', 60_000)).toBe(true);
      } finally {
        db.close();
      }
    });

    it('two connections to one file see each other at once: one claim wins, the other sees it', async () => {
      const [a, b] = [driver.open(path), driver.open(path)];
      try {
        const [one, two] = [sqliteStore({ client: a, pruneEveryMs: 0 }), sqliteStore({ client: b, pruneEveryMs: 0 })];
        const key = `shared:wdl_${randomUUID()}`;
        expect(await one.claim(key, 'x', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        expect(await two.claim(key, 'y', 60_000)).toMatchObject({ state: 'in_progress' });
        expect(await two.complete(key, 'x', 60_000)).toBe(true);
        expect(await one.claim(key, 'z', 60_000)).toEqual({ state: 'completed' });
      } finally {
        a.close();
        b.close();
      }
    });

    it('refuses a key with a lone surrogate (StoreDataError) instead of storing it as another key', async () => {
      const db = driver.open(path);
      try {
        const store = sqliteStore({ client: db, pruneEveryMs: 0 });
        const error = await Promise.resolve(store.claim(`bad:\uD800:${randomUUID()}`, 't', 60_000)).catch((e: unknown) => e);
        expect(StoreDataError.is(error)).toBe(true);
        // A NUL is stored as itself: keys differing after it stay apart.
        const id = randomUUID();
        expect(await store.claim(`nul:${id}\u0000a`, 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        expect(await store.claim(`nul:${id}\u0000b`, 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
      } finally {
        db.close();
      }
    });

    it('prune() deletes only the rows nothing needs any more', async () => {
      const db = driver.open(file('prune'));
      try {
        const store = sqliteStore({ client: db, table: 'prune_test', keepMs: 150, pruneEveryMs: 0 });
        await store.claim('live', 'a', 60_000); // live lease: kept
        await store.claim('done-short', 'b', 50); // pruned at the later of lease + keepMs and its retention
        await store.complete('done-short', 'b', 100); // retention ends: pruned
        await store.claim('done-long', 'c', 60_000);
        await store.complete('done-long', 'c', 60_000); // retained: kept
        await store.claim('released', 'd', 60_000);
        await store.release('released', 'd'); // released, keepMs 150: pruned
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await store.prune()).toBe(2);
        expect(db.prepare('SELECT group_concat(key) AS keys FROM (SELECT key FROM prune_test ORDER BY key)').get()).toEqual({
          keys: 'done-long,live',
        });
        expect(await store.claim('done-long', 'e', 60_000)).toEqual({ state: 'completed' });
      } finally {
        db.close();
      }
    });
  });
}

/** An error as the drivers throw it, with SQLite's result code. */
const sqliteError = (message: string, code: string) => Object.assign(new Error(message), { code });

/**
 * The driver's database as the store sees it, counting the store's COMMITs; `failCommits` makes the
 * next COMMITs throw (without committing), and `failClaimsOf` makes the claim statement throw for
 * the keys given, as SQLite would.
 */
function instrumented(db: Closable) {
  const control = { commits: 0, failCommits: 0, failClaimsOf: new Map<string, Error>() };
  const database: SqliteDatabaseLike = {
    exec(sql) {
      if (sql === 'COMMIT') {
        if (control.failCommits > 0) {
          control.failCommits--;
          throw sqliteError('disk I/O error', 'SQLITE_IOERR');
        }
        control.commits++;
      }
      return db.exec(sql);
    },
    prepare(sql) {
      const statement = db.prepare(sql);
      if (!sql.includes('RETURNING attempt')) return statement;
      return {
        run: (...params) => statement.run(...params),
        get(...params) {
          const error = control.failClaimsOf.get(params[0] as string);
          if (error !== undefined) throw error;
          return statement.get(...params);
        },
      };
    },
  };
  return { database, control };
}

const ACQUIRED = { state: 'acquired', attempt: 1 };

for (const driver of drivers) {
  describe(`sqliteStore over ${driver.name}: the writes of one turn share a commit`, () => {
    const path = file(`batch-${driver.name.replace(':', '-')}`);
    const keysOf = (name: string, n: number) => {
      const id = randomUUID();
      return Array.from({ length: n }, (_, i) => `${name}:${id}:${i}`);
    };
    /** The rows another connection sees: only what was committed. */
    const committed = (keys: string[]): { key: string; state: string; attempt: number }[] => {
      const reader = driver.open(path);
      try {
        const read = reader.prepare('SELECT key, state, attempt FROM hookline_idempotency WHERE key = ?');
        return keys.flatMap((key) => {
          const row = read.get(key) as { key: string; state: string; attempt: number } | undefined;
          return row === undefined ? [] : [{ key: row.key, state: row.state, attempt: Number(row.attempt) }];
        });
      } finally {
        reader.close();
      }
    };

    it('answers the claims of one turn as it would one by one, in one commit, 64 operations at most', async () => {
      const db = driver.open(path);
      try {
        const { database, control } = instrumented(db);
        const store = sqliteStore({ client: database, pruneEveryMs: 0 });
        const [done, mixed] = keysOf('turn-alone', 2);
        expect(await store.claim(done!, 'd', 60_000)).toEqual(ACQUIRED);
        expect(await store.complete(done!, 'd', 60_000)).toBe(true);
        expect(control.commits).toBe(0); // one operation at a time: each statement its own commit

        const keys = keysOf('turn', 10);
        const answers = await Promise.all([
          ...keys.map((key) => store.claim(key, 'a', 60_000)),
          ...keys.map((key) => store.claim(key, 'b', 60_000)),
          store.claim(done!, 'e', 60_000),
          // In call order: each operation sees the ones before it in its turn.
          store.claim(mixed!, 'm', 60_000),
          store.complete(mixed!, 'm', 60_000),
          store.claim(mixed!, 'n', 60_000),
        ]);
        expect(control.commits).toBe(1);
        expect(answers.slice(0, 10)).toEqual(keys.map(() => ACQUIRED));
        for (const answer of answers.slice(10, 20)) {
          expect(answer).toMatchObject({ state: 'in_progress' });
          const { retryAfterMs } = answer as { retryAfterMs: number };
          expect(retryAfterMs).toBeGreaterThan(0);
          expect(retryAfterMs).toBeLessThanOrEqual(60_000);
        }
        expect(answers.slice(20)).toEqual([{ state: 'completed' }, ACQUIRED, true, { state: 'completed' }]);
        expect(committed(keys)).toEqual(keys.map((key) => ({ key, state: 'l', attempt: 1 })));

        const many = keysOf('turn-many', 150);
        expect(await Promise.all(many.map((key) => store.claim(key, 't', 60_000)))).toEqual(many.map(() => ACQUIRED));
        expect(control.commits).toBe(1 + Math.ceil(150 / 64));
        expect(committed(many)).toHaveLength(150);
      } finally {
        db.close();
      }
    });

    it('rejects every operation of a turn whose BEGIN found the file locked, and records none of them', async () => {
      const [db, other] = [driver.open(path), driver.open(path)];
      try {
        const store = sqliteStore({ client: db, busyTimeoutMs: 20, pruneEveryMs: 0 });
        const [held, fresh] = keysOf('begin-busy', 2);
        expect(await store.claim(held!, 't1', 60_000)).toEqual(ACQUIRED);
        other.exec('BEGIN EXCLUSIVE'); // another process writing, past the busy timeout
        let outcomes: PromiseSettledResult<unknown>[];
        try {
          outcomes = await Promise.allSettled([
            store.release(held!, 't1'),
            store.claim(fresh!, 't2', 60_000),
            store.extend(held!, 't1', 60_000),
          ]);
        } finally {
          other.exec('ROLLBACK');
        }
        for (const outcome of outcomes) {
          expect(outcome.status).toBe('rejected');
          const { reason } = outcome as PromiseRejectedResult;
          expect(StoreDataError.is(reason)).toBe(false); // an outage: answered 503, retried
          expect(String(reason)).toMatch(/locked|busy/i);
        }
        // Nothing of that turn happened: the lease is still held, the fresh key never claimed.
        expect(await store.claim(held!, 't3', 60_000)).toMatchObject({ state: 'in_progress' });
        expect(await store.release(held!, 't1')).toBe(true);
        expect(await store.claim(held!, 't3', 60_000)).toEqual({ state: 'acquired', attempt: 2 });
        expect(await store.claim(fresh!, 't4', 60_000)).toEqual(ACQUIRED);
      } finally {
        other.close();
        db.close();
      }
    });

    it('rejects every operation of a turn whose COMMIT failed, rolls it back and leaves no transaction open', async () => {
      const db = driver.open(path);
      try {
        const { database, control } = instrumented(db);
        const store = sqliteStore({ client: database, pruneEveryMs: 0 });
        const [held, fresh, done] = keysOf('commit-fails', 3);
        expect(await store.claim(held!, 't1', 60_000)).toEqual(ACQUIRED);
        expect(await store.claim(done!, 't1', 60_000)).toEqual(ACQUIRED);
        control.failCommits = 1;
        const outcomes = await Promise.allSettled([
          store.release(held!, 't1'),
          store.claim(fresh!, 't2', 60_000),
          store.complete(done!, 't1', 60_000),
        ]);
        expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
        for (const outcome of outcomes) expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/disk I\/O error/);
        db.exec('BEGIN'); // throws if the store left its transaction open
        db.exec('ROLLBACK');
        expect(committed([held!, fresh!, done!])).toEqual([
          { key: held, state: 'l', attempt: 1 },
          { key: done, state: 'l', attempt: 1 },
        ]);
        expect(await store.claim(held!, 't3', 60_000)).toMatchObject({ state: 'in_progress' });
        expect(await store.release(held!, 't1')).toBe(true);
        expect(await store.claim(held!, 't3', 60_000)).toEqual({ state: 'acquired', attempt: 2 });
        expect(await store.claim(fresh!, 't4', 60_000)).toEqual(ACQUIRED);
        expect(await store.complete(done!, 't1', 60_000)).toBe(true);
      } finally {
        db.close();
      }
    });

    it('rejects an operation whose value SQLite refuses alone: the others of its turn commit', async () => {
      const db = driver.open(path);
      try {
        const { database, control } = instrumented(db);
        const store = sqliteStore({ client: database, pruneEveryMs: 0 });
        const [before, tooBig, after] = keysOf('data-error', 3);
        control.failClaimsOf.set(tooBig!, sqliteError('string or blob too big', 'SQLITE_TOOBIG'));
        const outcomes = await Promise.allSettled([
          store.claim(before!, 't', 60_000),
          store.claim(tooBig!, 't', 60_000),
          store.claim(`${before}\uD800`, 't', 60_000), // a lone surrogate: refused before it is queued
          store.claim(after!, 't', 60_000),
        ]);
        expect(control.commits).toBe(1);
        expect(outcomes[0]).toEqual({ status: 'fulfilled', value: ACQUIRED });
        expect(outcomes[3]).toEqual({ status: 'fulfilled', value: ACQUIRED });
        for (const outcome of [outcomes[1]!, outcomes[2]!]) {
          expect(outcome.status).toBe('rejected');
          expect(StoreDataError.is((outcome as PromiseRejectedResult).reason)).toBe(true);
        }
        expect(committed([before!, tooBig!, after!])).toEqual([
          { key: before, state: 'l', attempt: 1 },
          { key: after, state: 'l', attempt: 1 },
        ]);
      } finally {
        db.close();
      }
    });

    it('rejects the whole turn when a statement fails for another reason: the transaction may be gone', async () => {
      const db = driver.open(path);
      try {
        const { database, control } = instrumented(db);
        const store = sqliteStore({ client: database, pruneEveryMs: 0 });
        const [before, full, after] = keysOf('disk-full', 3);
        control.failClaimsOf.set(full!, sqliteError('database or disk is full', 'SQLITE_FULL'));
        const outcomes = await Promise.allSettled([
          store.claim(before!, 't', 60_000),
          store.claim(full!, 't', 60_000),
          store.claim(after!, 't', 60_000),
        ]);
        for (const outcome of outcomes) {
          expect(outcome.status).toBe('rejected');
          expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/disk is full/);
          expect(StoreDataError.is((outcome as PromiseRejectedResult).reason)).toBe(false);
        }
        expect(control.commits).toBe(0);
        expect(committed([before!, full!, after!])).toEqual([]);
        db.exec('BEGIN'); // throws if the store left its transaction open
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    });

    it('joins a transaction the application holds open on the connection, one operation at a time', async () => {
      const db = driver.open(path);
      try {
        const { database, control } = instrumented(db);
        const store = sqliteStore({ client: database, pruneEveryMs: 0 });
        const keys = keysOf('app-transaction', 3);
        db.exec('BEGIN');
        expect(await Promise.all(keys.map((key) => store.claim(key, 't', 60_000)))).toEqual(keys.map(() => ACQUIRED));
        expect(control.commits).toBe(0);
        db.exec('ROLLBACK'); // the application's to commit or not
        expect(await Promise.all(keys.map((key) => store.claim(key, 'u', 60_000)))).toEqual(keys.map(() => ACQUIRED));
        expect(committed(keys)).toHaveLength(3);
      } finally {
        db.close();
      }
    });

    it('close() writes what is queued before it returns, in a commit, and leaves no transaction open', async () => {
      const db = driver.open(path);
      try {
        const { database, control } = instrumented(db);
        const store = sqliteStore({ client: database, pruneEveryMs: 0 });
        const keys = keysOf('close', 3);
        const answers = Promise.all(keys.map((key) => store.claim(key, 't', 60_000)));
        await store.close();
        expect(control.commits).toBe(1);
        expect(committed(keys)).toEqual(keys.map((key) => ({ key, state: 'l', attempt: 1 })));
        db.exec('BEGIN');
        db.exec('ROLLBACK');
        expect(await answers).toEqual(keys.map(() => ACQUIRED));
      } finally {
        db.close();
      }
    });

    it('close() rejects what is queued when the database was closed under it, and does not throw', async () => {
      const db = driver.open(path);
      const store = sqliteStore({ client: db, pruneEveryMs: 0 });
      const keys = keysOf('closed-under', 3);
      const outcomes = Promise.allSettled(keys.map((key) => store.claim(key, 't', 60_000)));
      db.close();
      expect(() => store.close()).not.toThrow();
      for (const outcome of await outcomes) {
        expect(outcome.status).toBe('rejected');
        expect(StoreDataError.is((outcome as PromiseRejectedResult).reason)).toBe(false);
      }
      expect(committed(keys)).toEqual([]);
    });
  });
}

describe('close() of a store that opened its file', () => {
  it('writes the queued operations, then refuses new ones with a clear error', async () => {
    if (nodeSqlite === undefined) {
      expect(() => sqliteStore({ filename: file() })).toThrow(/has no node:sqlite/); // `filename` needs node:sqlite
      return;
    }
    const path = file('owned');
    const store = sqliteStore({ filename: path, pruneEveryMs: 0 });
    const answers = Promise.all([store.claim('a', 't', 60_000), store.claim('b', 't', 60_000)]);
    await store.close();
    expect(await answers).toEqual([ACQUIRED, ACQUIRED]);
    await expect(store.claim('c', 't', 60_000)).rejects.toThrow(/store is closed/);
    const reader = new nodeSqlite.DatabaseSync(path);
    try {
      expect(reader.prepare('SELECT count(*) AS n FROM hookline_idempotency').get()).toEqual({ n: 2 });
    } finally {
      (reader as Closable).close();
    }
  });
});

describe('prune', () => {
  it('walks the whole table in chunks, deleting only what nothing needs', async () => {
    const db = drivers[0]!.open(file('prune-chunks'));
    try {
      const store = sqliteStore({ client: db, pruneEveryMs: 0 });
      const now = Date.now();
      const insert = db.prepare(`INSERT INTO hookline_idempotency VALUES (?, 'c', NULL, 1, ?, ?)`);
      db.exec('BEGIN');
      for (let i = 0; i < 12_000; i++) {
        const at = i % 2 === 0 ? now - 1_000 : now + 60_000; // half of them past their purge time
        insert.run(`hookline:wdl_${String(i).padStart(6, '0')}`, at, at);
      }
      db.exec('COMMIT');
      expect(await store.prune()).toBe(6_000);
      expect(db.prepare('SELECT count(*) AS n FROM hookline_idempotency').get()).toEqual({ n: 6_000 });
      expect(await store.prune()).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('files', () => {
  it('grows by a bounded number of bytes per completed record', async () => {
    const driver = drivers[0]!;
    const path = file('size');
    const db = driver.open(path);
    try {
      const store = sqliteStore({ client: db, pruneEveryMs: 0 });
      // All in one turn, then all completed in the next: the store writes them 64 to a commit.
      const keys = Array.from({ length: 5_000 }, () => `hookline:wdl_${randomUUID().replaceAll('-', '').slice(0, 24)}`);
      await Promise.all(keys.map((key) => store.claim(key, 'token', 30_000)));
      await Promise.all(keys.map((key) => store.complete(key, 'token', 72 * 3_600_000)));
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      expect(statSync(path).size / 5_000).toBeLessThan(250);
    } finally {
      db.close();
    }
  });
});

for (const driver of drivers) {
  describe(`sqliteStore over ${driver.name}: a file another connection holds while the store is built`, () => {
    /** SQLite's own answer to a locked file, from this driver: what the store must recognise. */
    function realBusyError(): unknown {
      const path = file('busy');
      const holder = driver.open(path);
      const other = driver.open(path);
      try {
        holder.exec('BEGIN EXCLUSIVE');
        let thrown: unknown;
        try {
          sqliteStore({ client: other, busyTimeoutMs: 20, pruneEveryMs: 0 });
        } catch (error) {
          thrown = error;
        }
        holder.exec('ROLLBACK');
        return thrown;
      } finally {
        other.close();
        holder.close();
      }
    }

    it("fails with SQLite's busy error once busyTimeoutMs has passed", () => {
      const error = realBusyError() as { code?: unknown; errcode?: unknown; message?: unknown };
      expect(error).toBeInstanceOf(Error);
      expect(String(error.message)).toMatch(/locked|busy/i);
    });

    it('tries the switch to WAL and the schema again while SQLite answers busy at once, then works', async () => {
      const busy = realBusyError();
      const db = driver.open(file('retry'));
      const seen: string[] = [];
      const failures = { journal: 3, schema: 2 };
      const flaky = {
        exec(sql: string) {
          seen.push(sql.trim().split(/\s+/).slice(0, 2).join(' '));
          if (sql.includes('journal_mode') && failures.journal-- > 0) throw busy;
          if (sql.includes('CREATE TABLE') && failures.schema-- > 0) throw busy;
          return db.exec(sql);
        },
        prepare: (sql: string) => db.prepare(sql),
      };
      try {
        const store = sqliteStore({ client: flaky, busyTimeoutMs: 5_000, pruneEveryMs: 0 });
        expect(seen.filter((statement) => statement === 'PRAGMA journal_mode').length).toBe(4);
        expect(seen.filter((statement) => statement === 'CREATE TABLE').length).toBe(3);
        expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
        expect(await store.claim('wdl_busy', 't', 60_000)).toEqual(ACQUIRED);
      } finally {
        db.close();
      }
    });

    it('does not retry an error other than busy', () => {
      const db = driver.open(file('other-error'));
      let attempts = 0;
      const failing = {
        exec(sql: string) {
          if (sql.includes('journal_mode')) {
            attempts++;
            throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR', errcode: 10 });
          }
          return db.exec(sql);
        },
        prepare: (sql: string) => db.prepare(sql),
      };
      try {
        expect(() => sqliteStore({ client: failing, busyTimeoutMs: 5_000, pruneEveryMs: 0 })).toThrow('disk I/O error');
        expect(attempts).toBe(1);
      } finally {
        db.close();
      }
    });
  });
}
