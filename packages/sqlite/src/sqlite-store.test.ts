import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreDataError } from '@hookline/core/adapter';
import { describeStoreConformance } from '@hookline/testing';
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
      expect(() => sqliteStore({ database: db, table: 'a.b' })).toThrow(/plain identifier/);
    } finally {
      db.close();
    }
  });

  it('takes either filename or database, and says which Node has node:sqlite', () => {
    expect(() => sqliteStore({})).toThrow(/either `filename`/);
    if (nodeSqlite === undefined) {
      expect(() => sqliteStore({ filename: file() })).toThrow(/has no node:sqlite.*better-sqlite3/);
    } else {
      const store = sqliteStore({ filename: file() });
      expect(store.claim('k', 't', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
      store.close();
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
          store: sqliteStore({ database: db, pruneEveryMs: 0 }),
          breakBackend: () => {
            closed = true;
            db.close();
          },
          cleanup: () => {
            if (!closed) db.close();
          },
        };
      },
      { rounds: 5, versions: true },
    );

    it('puts the file in WAL mode, synchronous NORMAL unless asked for FULL, with the busy timeout asked for', () => {
      const db = driver.open(path);
      try {
        sqliteStore({ database: db, busyTimeoutMs: 1_234, pruneEveryMs: 0 });
        expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
        expect(Object.values(db.prepare('PRAGMA busy_timeout').get() as object)).toEqual([1_234]);
        expect(db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 1 }); // NORMAL
        sqliteStore({ database: db, synchronous: 'full', pruneEveryMs: 0 });
        expect(db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 2 });
      } finally {
        db.close();
      }
    });

    it('keeps every record across a restart: a completion is still a duplicate, a lease still held', () => {
      const first = driver.open(path);
      const store = sqliteStore({ database: first, pruneEveryMs: 0 });
      const [done, busy] = [`restart:wdl_${randomUUID()}`, `restart:wdl_${randomUUID()}`];
      expect(store.claim(done, 'a', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
      expect(store.complete(done, 'a', 60_000)).toBe(true);
      expect(store.claim(busy, 'b', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
      first.close();
      const second = driver.open(path);
      try {
        const again = sqliteStore({ database: second, pruneEveryMs: 0 });
        expect(again.claim(done, 'c', 60_000)).toEqual({ state: 'completed' });
        expect(again.claim(busy, 'c', 60_000)).toMatchObject({ state: 'in_progress' });
        expect(again.complete(busy, 'b', 60_000)).toBe(true);
      } finally {
        second.close();
      }
    });

    it('lets an owner finish past its lease while no other claim took the key over; after one, never', () => {
      const db = driver.open(path);
      try {
        const store = sqliteStore({ database: db, pruneEveryMs: 0 });
        const [k1, k2] = [`late:wdl_${randomUUID()}`, `late:wdl_${randomUUID()}`];
        store.claim(k1, 'slow', 1);
        store.claim(k2, 'slow', 1);
        const until = Date.now() + 5;
        while (Date.now() < until); // both leases end
        expect(store.extend(k1, 'slow', 60_000)).toBe(true);
        expect(store.complete(k1, 'slow', 60_000)).toBe(true);
        expect(store.claim(k2, 'fast', 60_000)).toEqual({ state: 'acquired', attempt: 2 });
        expect(store.complete(k2, 'slow', 60_000)).toBe(false);
        expect(store.release(k2, 'slow')).toBe(false);
        expect(store.complete(k2, 'fast', 60_000)).toBe(true);
      } finally {
        db.close();
      }
    });

    it('two connections to one file see each other at once: one claim wins, the other sees it', () => {
      const [a, b] = [driver.open(path), driver.open(path)];
      try {
        const [one, two] = [sqliteStore({ database: a, pruneEveryMs: 0 }), sqliteStore({ database: b, pruneEveryMs: 0 })];
        const key = `shared:wdl_${randomUUID()}`;
        expect(one.claim(key, 'x', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        expect(two.claim(key, 'y', 60_000)).toMatchObject({ state: 'in_progress' });
        expect(two.complete(key, 'x', 60_000)).toBe(true);
        expect(one.claim(key, 'z', 60_000)).toEqual({ state: 'completed' });
      } finally {
        a.close();
        b.close();
      }
    });

    it('refuses a key with a lone surrogate (StoreDataError) instead of storing it as another key', async () => {
      const db = driver.open(path);
      try {
        const store = sqliteStore({ database: db, pruneEveryMs: 0 });
        const error = await Promise.resolve(store.claim(`bad:\uD800:${randomUUID()}`, 't', 60_000)).catch((e: unknown) => e);
        expect(StoreDataError.is(error)).toBe(true);
        // A NUL is stored as itself: keys differing after it stay apart.
        const id = randomUUID();
        expect(store.claim(`nul:${id}\u0000a`, 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        expect(store.claim(`nul:${id}\u0000b`, 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
      } finally {
        db.close();
      }
    });

    it('prune() deletes only the rows nothing needs any more', async () => {
      const db = driver.open(file('prune'));
      try {
        const store = sqliteStore({ database: db, table: 'prune_test', keepMs: 150, pruneEveryMs: 0 });
        store.claim('live', 'a', 60_000); // live lease: kept
        store.claim('done-short', 'b', 50); // pruned at the later of lease + keepMs and its retention
        store.complete('done-short', 'b', 100); // retention ends: pruned
        store.claim('done-long', 'c', 60_000);
        store.complete('done-long', 'c', 60_000); // retained: kept
        store.claim('released', 'd', 60_000);
        store.release('released', 'd'); // released, keepMs 150: pruned
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(store.prune()).toBe(2);
        expect(db.prepare('SELECT group_concat(key) AS keys FROM (SELECT key FROM prune_test ORDER BY key)').get()).toEqual({
          keys: 'done-long,live',
        });
        expect(store.claim('done-long', 'e', 60_000)).toEqual({ state: 'completed' });
      } finally {
        db.close();
      }
    });
  });
}

describe('prune', () => {
  it('walks the whole table in chunks, deleting only what nothing needs', () => {
    const db = drivers[0]!.open(file('prune-chunks'));
    try {
      const store = sqliteStore({ database: db, pruneEveryMs: 0 });
      const now = Date.now();
      const insert = db.prepare(`INSERT INTO hookline_idempotency VALUES (?, 'c', NULL, 1, ?, ?)`);
      db.exec('BEGIN');
      for (let i = 0; i < 12_000; i++) {
        const at = i % 2 === 0 ? now - 1_000 : now + 60_000; // half of them past their purge time
        insert.run(`hookline:wdl_${String(i).padStart(6, '0')}`, at, at);
      }
      db.exec('COMMIT');
      expect(store.prune()).toBe(6_000);
      expect(db.prepare('SELECT count(*) AS n FROM hookline_idempotency').get()).toEqual({ n: 6_000 });
      expect(store.prune()).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('files', () => {
  it('grows by a bounded number of bytes per completed record', () => {
    const driver = drivers[0]!;
    const path = file('size');
    const db = driver.open(path);
    try {
      const store = sqliteStore({ database: db, pruneEveryMs: 0 });
      db.exec('BEGIN'); // one commit: the test is about the size, not the speed
      for (let i = 0; i < 5_000; i++) {
        const key = `hookline:wdl_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
        store.claim(key, 'token', 30_000);
        store.complete(key, 'token', 72 * 3_600_000);
      }
      db.exec('COMMIT');
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      expect(statSync(path).size / 5_000).toBeLessThan(250);
    } finally {
      db.close();
    }
  });
});
