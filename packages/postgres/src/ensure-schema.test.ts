// setup() and schemaSql() for a table and schema of one's own: the tables, the indexes named
// after the table, the schema created only when asked for, and a store that then works in them.
import { randomUUID } from 'node:crypto';
import { requireServer } from '@hookline/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store';
import { schemaSql } from './schema';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const server = await requireServer('PostgreSQL', DATABASE_URL);
const schema = `hookline_ens_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

describe('schemaSql', () => {
  it('creates no schema and qualifies nothing without a schema option', () => {
    const sql = schemaSql({ table: 'webhooks' });
    expect(sql).not.toMatch(/CREATE SCHEMA/);
    expect(sql).toMatch(/^CREATE TABLE IF NOT EXISTS "webhooks" \(/);
    expect(sql).toContain('CREATE INDEX IF NOT EXISTS "webhooks_purge_at_idx" ON "webhooks" (purge_at);');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "webhooks_versions" (');
    expect(sql).toContain('CREATE INDEX IF NOT EXISTS "webhooks_versions_expires_at_idx" ON "webhooks_versions" (expires_at);');
  });

  it('creates the schema first and qualifies both tables with it', () => {
    const sql = schemaSql({ schema: 'hooks', table: 'webhooks' });
    expect(sql).toMatch(/^CREATE SCHEMA IF NOT EXISTS "hooks";\nCREATE TABLE IF NOT EXISTS "hooks"."webhooks" \(/);
    expect(sql).toContain('ON "hooks"."webhooks" (purge_at);');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "hooks"."webhooks_versions" (');
  });

  it('names the setting at fault when a name is not a plain identifier or its derived names grow too long', () => {
    expect(() => schemaSql({ table: 'web hooks' })).toThrow(/^postgresStore: table "web hooks" must be a plain identifier/);
    expect(() => schemaSql({ schema: 'a.b' })).toThrow(/^postgresStore: schema "a\.b" must be a plain identifier/);
    // 60 characters fit a table name, not the index name built from it (63 at most).
    const long = 't'.repeat(60);
    expect(() => schemaSql({ table: long })).toThrow(new RegExp(`^postgresStore: index "${long}_purge_at_idx" must be a plain identifier`));
    // 45 characters leave room for the purge index, not for the version table's index.
    const versions = 'v'.repeat(45);
    expect(() => schemaSql({ table: versions })).toThrow(
      new RegExp(`^postgresStore: index "${versions}_versions_expires_at_idx" must be a plain identifier`),
    );
  });

  it('uses hookline_idempotency by default', () => {
    expect(schemaSql()).toMatch(/^CREATE TABLE IF NOT EXISTS "hookline_idempotency" \(/);
    expect(schemaSql()).toContain('"hookline_idempotency_versions_expires_at_idx"');
  });
});

describe.skipIf(!server.reachable)('setup', () => {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  it('creates the schema, both tables and their indexes, and the store then keeps records and versions there', async () => {
    const store = postgresStore({ client: admin, schema, table: 'deliveries' });
    await store.setup();
    await store.setup(); // again: nothing fails
    const tables = await admin.query('SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename', [schema]);
    expect(tables.rows.map((r: { tablename: string }) => r.tablename)).toEqual(['deliveries', 'deliveries_versions']);
    const indexes = await admin.query('SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname', [schema]);
    expect(indexes.rows.map((r: { indexname: string }) => r.indexname)).toEqual([
      'deliveries_pkey',
      'deliveries_purge_at_idx',
      'deliveries_versions_expires_at_idx',
      'deliveries_versions_pkey',
    ]);
    expect(store.table).toBe(`"${schema}"."deliveries"`);
    const key = `ensured:wdl_${randomUUID()}`;
    expect(await store.claim(key, 't', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
    expect(await store.advanceVersion(key, 7, 60_000)).toBe(true);
    expect(await store.readVersion(key)).toBe(7);
    const versions = await admin.query(`SELECT version FROM "${schema}".deliveries_versions WHERE key = $1`, [key]);
    expect(versions.rows).toEqual([{ version: 7 }]);
  });
});
