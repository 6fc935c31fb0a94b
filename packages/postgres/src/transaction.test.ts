// The Postgres store's transaction() (transactional handlers) and version records, on the shared
// server: each run in a schema of its own, dropped afterwards. The shared SQL transaction tests
// (@hookline/testing/conformance) run here too; what is the database's own for them: how a row is
// written and counted, and how a connection is ended.
import { createHmac, randomUUID } from 'node:crypto';
import { createReceiver, type ReceiverInput } from '@hookline/core';
import { requireServer } from '@hookline/testing';
import { describeSqlTransactions } from '@hookline/testing/conformance';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';
import { postgresTransactionsSubject } from './test-support';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_tx_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const SECRET = 'whsec_transaction_test';
const LONG_MS = 60_000;

function signed(event: string, data: Record<string, unknown>, deliveryId = `wdl_${randomUUID().replaceAll('-', '')}`): ReceiverInput {
  const body = Buffer.from(JSON.stringify({ event, timestamp: new Date().toISOString(), deliveryId, data }));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
      'x-service-event': event,
      'x-service-delivery-id': deliveryId,
    },
  };
}

describe.skipIf(!server.reachable)('postgresStore: transaction() and version records', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  const store = postgresStore({ client: pool, schema });
  const rows = `"${schema}".rows`;
  const key = (label: string) => `tx:${label}:wdl_${randomUUID().replaceAll('-', '')}`;
  const rowsOf = async (id: string) =>
    ((await pool.query(`SELECT count(*)::int AS n FROM ${rows} WHERE id = $1`, [id])).rows[0] as { n: number }).n;

  beforeAll(async () => {
    await store.setup();
    await pool.query(`CREATE TABLE ${rows} (id text PRIMARY KEY)`);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('makes a claim that comes while the completion holds the row wait for the commit, then answer completed', async () => {
    const k = key('race');
    const t = randomUUID();
    await store.claim(k, t, 100);
    await new Promise((resolve) => setTimeout(resolve, 150)); // expired, but still t's until someone claims
    let claim: unknown;
    const answer = await store.transaction!(
      async (tx) => {
        await (tx as pg.PoolClient).query(`INSERT INTO ${rows} (id) VALUES ($1)`, [k]);
        return 0;
      },
      { key: k, token: t, retentionMs: LONG_MS },
    ).then(async (result) => {
      claim = store.claim(k, randomUUID(), LONG_MS);
      return result;
    });
    expect(answer.completed).toBe(true);
    expect(await claim).toEqual({ state: 'completed' });
    expect(await rowsOf(k)).toBe(1);
  });

  it('is offered with a pg Pool only: a lone Client has no connection to lend', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    expect(postgresStore({ client: client }).transaction).toBeUndefined();
    expect(typeof store.transaction).toBe('function');
  });

  it('advances a guarded transactional handler’s version in its transaction, end to end: an older delivery is then skipped', async () => {
    const receiver = createReceiver({ secret: SECRET, store, namespace: `hookline-${schema}:` });
    const written: number[] = [];
    receiver.on(
      'line.status_changed',
      async (delivery, context) => {
        await (context.transaction as pg.PoolClient).query(`INSERT INTO ${rows} (id) VALUES ($1)`, [delivery.deliveryId]);
        written.push(Number(delivery.data.seq));
      },
      { name: 'status', transactional: true, order: { key: (d) => String(d.data.lineId), version: (d) => Number(d.data.seq) } },
    );
    expect((await receiver.handle(signed('line.status_changed', { lineId: 'lin_tx', seq: 2 }))).status).toBe(200);
    expect(await store.readVersion(`hookline-${schema}:order:status:version:lin_tx`)).toBe(2);
    expect((await receiver.handle(signed('line.status_changed', { lineId: 'lin_tx', seq: 1 }))).status).toBe(200);
    expect(written).toEqual([2]);
  });

  it('keeps version records in <table>_versions, on the database clock, and prune() deletes the expired ones', async () => {
    const k = key('version');
    expect(await store.advanceVersion(k, 5, 100)).toBe(true);
    const { rows: found } = await pool.query(`SELECT version FROM "${schema}".hookline_idempotency_versions WHERE key = $1`, [k]);
    expect(found).toEqual([{ version: 5 }]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.prune()).toBeGreaterThanOrEqual(1);
    const { rows: left } = await pool.query(`SELECT 1 FROM "${schema}".hookline_idempotency_versions WHERE key = $1`, [k]);
    expect(left).toEqual([]);
  });

  it('prunes a schema made before version records without failing (no _versions table)', async () => {
    const old = `${schema}_old`;
    await pool.query(`CREATE SCHEMA "${old}"`);
    try {
      await pool.query(`CREATE TABLE "${old}".hookline_idempotency (key text PRIMARY KEY, state "char" NOT NULL, token text,
        attempt integer NOT NULL, expires_at timestamptz NOT NULL, purge_at timestamptz NOT NULL)`);
      expect(await postgresStore({ client: pool, schema: old }).prune()).toBe(0);
    } finally {
      await pool.query(`DROP SCHEMA "${old}" CASCADE`);
    }
  });

  describeSqlTransactions(postgresTransactionsSubject({ databaseUrl: DATABASE_URL, pool, schema, rows }));
});
