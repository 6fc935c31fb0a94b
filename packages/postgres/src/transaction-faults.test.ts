// The Postgres store's transaction() when the database refuses part of it or stops answering: a BEGIN
// refused or unanswered, a ROLLBACK unanswered, a COMMIT that fails, a completion whose key the
// database cannot hold. Nothing is kept half-done, the lease stays with its token for the next
// attempt, and a connection whose state is unknown goes back to nobody.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_txf_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const LONG_MS = 60_000;

/**
 * A TCP proxy to the shared server that goes silent on a connection once its client sends the simple
 * query `text`: that statement and everything after it go unanswered, as over a link that died at that
 * moment. The connection stays open (pg's `query_timeout` gives up on the statement, and the client
 * still counts as usable), which is the case where only the store can tell the pool not to reuse it.
 */
async function proxySilentFrom(text: string) {
  const query = Buffer.alloc(1 + 4 + Buffer.byteLength(text) + 1);
  query.write('Q');
  query.writeInt32BE(query.length - 1, 1);
  query.write(text, 5);
  const target = new URL(DATABASE_URL);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    let silent = false;
    client.on('data', (chunk: Buffer) => {
      if (!silent && chunk.includes(query)) silent = true;
      if (!silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!silent) client.write(chunk);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', close);
      socket.on('close', close);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(DATABASE_URL);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    /** A pool through the proxy with the fail-fast client limit the README recommends (shortened). */
    pool: () => new pg.Pool({ connectionString: url.toString(), max: 1, query_timeout: 1_000 }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const backendPid = async (client: pg.PoolClient) => ((await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;

/** What `promise` rejects with, or undefined when it resolves. */
const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** A fresh delivery key leased in `store`: the completion a transaction of it commits. */
async function leased(store: ReturnType<typeof postgresStore>, name: string) {
  const completion = { key: `${name}:wdl_${randomUUID()}`, token: randomUUID(), retentionMs: LONG_MS };
  await store.claim(completion.key, completion.token, LONG_MS);
  return completion;
}

describe.skipIf(!server.reachable)('postgresStore: transaction() when the database refuses', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  // Built for each test (beforeEach), not while the file is collected or in beforeAll: what the store
  // sets up when it is built (its statements, the completion its transactions run) then counts for
  // the test that uses it, under mutation testing too.
  let store: ReturnType<typeof postgresStore>;
  beforeEach(() => {
    store = postgresStore({ client: pool, schema });
  });
  // A unique constraint checked only at COMMIT: a duplicate inserted by the work fails the COMMIT itself.
  const deferred = `"${schema}".deferred`;
  const rowsOf = async (id: string) =>
    ((await pool.query(`SELECT count(*)::int AS n FROM ${deferred} WHERE id = $1`, [id])).rows[0] as { n: number }).n;

  beforeAll(async () => {
    await postgresStore({ client: pool, schema }).setup();
    await pool.query(`CREATE TABLE ${deferred} (id text, CONSTRAINT deferred_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('rejects with the server error when COMMIT fails: neither the work nor the completion is kept, the lease stays', async () => {
    const completion = await leased(store, 'tx-commit');
    const { key, token } = completion;
    const connectionsBefore = pool.totalCount;
    const failure = await rejectionOf(
      store.transaction!(async (tx) => {
        await (tx as pg.PoolClient).query(`INSERT INTO ${deferred} (id) VALUES ($1), ($1)`, [key]);
        return 'inserted twice';
      }, completion),
    );
    expect((failure as { code?: string }).code).toBe('23505'); // unique_violation, raised by COMMIT
    // Whether a failed COMMIT committed cannot be known from the client: that connection is closed, not reused.
    expect(pool.totalCount).toBe(connectionsBefore - 1);
    expect(await rowsOf(key)).toBe(0);
    // Not completed: the token still holds the lease.
    expect(await store.extend(key, token, LONG_MS)).toBe(true);
  });

  it('rolls the work back and rejects with a StoreDataError when the database cannot hold the completion key', async () => {
    // U+0000 passes the store's own checks, and PostgreSQL text refuses it (SQLSTATE 22021).
    const key = `tx-key:wdl_${randomUUID()}\u0000`;
    const marker = `tx-key:${randomUUID()}`;
    const failure = await rejectionOf(
      store.transaction!(
        async (tx) => {
          await (tx as pg.PoolClient).query(`INSERT INTO ${deferred} (id) VALUES ($1)`, [marker]);
          return 'inserted';
        },
        { key, token: randomUUID(), retentionMs: LONG_MS },
      ),
    );
    expect(StoreDataError.is(failure), String(failure)).toBe(true);
    expect(await rowsOf(marker)).toBe(0);
    expect(pool.totalCount - pool.idleCount).toBe(0); // the connection went back
  });

  it('refuses a retention that is not a positive number of milliseconds before borrowing a connection', async () => {
    for (const retentionMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '60000' as unknown as number]) {
      let ran = false;
      await expect(
        store.transaction!(
          async () => {
            ran = true;
          },
          { key: `tx-retention:wdl_${randomUUID()}`, token: 't', retentionMs },
        ),
      ).rejects.toThrow(/^postgresStore: retentionMs must be a positive number of milliseconds/);
      expect(ran).toBe(false);
    }
  });

  it('is offered with a pg Pool, and not with a Client or anything else that does not count its connections', async () => {
    expect(typeof postgresStore({ client: pool, schema }).transaction).toBe('function');
    const client = new pg.Client({ connectionString: DATABASE_URL });
    expect(postgresStore({ client: client, schema }).transaction).toBeUndefined();
    const query = pool.query.bind(pool) as typeof pool.query;
    const connect = pool.connect.bind(pool);
    const lookalikes = [
      { query, totalCount: 1, idleCount: 1 },
      { query, connect, idleCount: 1 },
      { query, connect, totalCount: 1 },
      { query, connect: 'connect', totalCount: 1, idleCount: 1 },
    ];
    for (const lookalike of lookalikes) expect(postgresStore({ client: lookalike as never, schema }).transaction).toBeUndefined();
    expect(typeof postgresStore({ client: { query, connect, totalCount: 0, idleCount: 0 } as never, schema }).transaction).toBe('function');
  });

  it("rejects with the server's error when it refuses BEGIN, runs nothing, and gives the sound connection back", async () => {
    const lending = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    try {
      // An earlier borrower gave the connection back inside a transaction that a failed statement
      // aborted: the server refuses BEGIN there (SQLSTATE 25P02), and the connection itself is fine.
      const earlier = await lending.connect();
      const pid = await backendPid(earlier);
      await earlier.query('BEGIN');
      await earlier.query('SELECT 1 / 0').catch(() => {});
      earlier.release();
      const completion = await leased(store, 'tx-begin');
      const { key, token } = completion;
      let ran = false;
      const failure = await rejectionOf(
        postgresStore({ client: lending, schema }).transaction!(async () => {
          ran = true;
        }, completion),
      );
      expect((failure as { code?: string }).code).toBe('25P02'); // in_failed_sql_transaction
      expect(ran).toBe(false);
      // A server's answer says nothing against the connection: it went back to the pool, not closed.
      expect([lending.totalCount, lending.idleCount]).toEqual([1, 1]);
      const again = await lending.connect();
      try {
        await again.query('ROLLBACK');
        expect(await backendPid(again)).toBe(pid);
      } finally {
        again.release();
      }
      expect(await store.extend(key, token, LONG_MS)).toBe(true);
    } finally {
      await lending.end();
    }
  });

  it('keeps the process up when the server ends the connection while the work runs: rejects, keeps nothing, closes that connection', async () => {
    // Without a listener of the store's own, the lent client's 'error' event would be an uncaught
    // exception (the pool does not listen while it lends a connection), which fails this file.
    const completion = await leased(store, 'tx-terminated');
    const { key, token } = completion;
    const failure = await rejectionOf(
      store.transaction!(async (tx) => {
        const client = tx as pg.PoolClient;
        await client.query(`INSERT INTO ${deferred} (id) VALUES ($1)`, [key]);
        await pool.query('SELECT pg_terminate_backend($1)', [await backendPid(client)]);
        await client.query('SELECT 1');
        return 'unreachable';
      }, completion),
    );
    expect(failure).toBeInstanceOf(Error);
    // The dead connection was discarded, not given back: every connection the pool can lend works.
    const answers = await Promise.all(Array.from({ length: 4 }, () => pool.query('SELECT 1 AS one')));
    expect(answers.map((answer) => (answer.rows[0] as { one: number }).one)).toEqual([1, 1, 1, 1]);
    expect(await rowsOf(key)).toBe(0);
    expect(await store.extend(key, token, LONG_MS)).toBe(true);
  });

  it('leaves no listener behind on a connection it gives back, however many transactions it lends', async () => {
    const single = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    try {
      const lending = postgresStore({ client: single, schema });
      const listeners: number[] = [];
      for (let i = 0; i < 12; i++) {
        const completion = await leased(lending, 'tx-listeners');
        const { completed } = await lending.transaction!(
          async (tx) => void listeners.push((tx as pg.PoolClient).listenerCount('error')),
          completion,
        );
        expect(completed).toBe(true);
      }
      // The same connection each time, with the store's one listener while lent, and no more.
      expect(new Set(listeners).size).toBe(1);
      expect(single.totalCount).toBe(1);
    } finally {
      await single.end();
    }
  });

  it('rejects when BEGIN gets no answer (query_timeout), runs nothing, and closes that connection', async () => {
    const proxy = await proxySilentFrom('BEGIN');
    const silent = proxy.pool();
    try {
      const completion = await leased(store, 'tx-begin-silent');
      const { key, token } = completion;
      let ran = false;
      const failure = await rejectionOf(
        postgresStore({ client: silent, schema }).transaction!(async () => {
          ran = true;
        }, completion),
      );
      expect((failure as Error).message).toBe('Query read timeout');
      expect(ran).toBe(false);
      // The BEGIN may still reach the server: the connection is closed, never lent again.
      expect(silent.totalCount).toBe(0);
      expect(await store.extend(key, token, LONG_MS)).toBe(true);
    } finally {
      await proxy.close();
      await silent.end();
    }
  });

  it("rejects with the work's own error when its ROLLBACK gets no answer, keeps nothing, and closes that connection", async () => {
    const proxy = await proxySilentFrom('ROLLBACK');
    const silent = proxy.pool();
    try {
      const completion = await leased(store, 'tx-rollback-silent');
      const { key, token } = completion;
      const thrown = new Error('the handler failed after its insert');
      const failure = await rejectionOf(
        postgresStore({ client: silent, schema }).transaction!(async (tx) => {
          await (tx as pg.PoolClient).query(`INSERT INTO ${deferred} (id) VALUES ($1)`, [key]);
          throw thrown;
        }, completion),
      );
      expect(failure).toBe(thrown);
      // The transaction is still open on a connection whose state is unknown: closed, not reused.
      expect(silent.totalCount).toBe(0);
      expect(await rowsOf(key)).toBe(0);
      expect(await store.extend(key, token, LONG_MS)).toBe(true);
    } finally {
      await proxy.close();
      await silent.end();
    }
  });
});
