// The transactional handler of packages/postgres/README.md, run as the README writes it: its module is
// the README's block as is, against the shared PostgreSQL (in a schema of its own, through the
// connection's search_path), and a signed delivery through its receiver must update its row. A block
// that forgets to create a table it uses fails here, not in a user's first try.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Receiver } from '@hookline/core';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { theBlock } from '../packaging/readme-blocks';
import { DATABASE_URL, requirePostgres } from '../support/servers';

const README = new URL('../../packages/postgres/README.md', import.meta.url).pathname;
// Inside the repository, so the block's imports resolve as the workspace's; ignored by git.
const dir = new URL('./.snippet-runs/', import.meta.url).pathname;
const schema = `hookline_readme_${randomBytes(6).toString('hex')}`;
const postgres = await requirePostgres();
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
const environment = { DATABASE_URL: process.env.DATABASE_URL, WEBHOOK_SECRET: process.env.WEBHOOK_SECRET };

afterAll(async () => {
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(dir, { recursive: true, force: true });
  if (postgres.reachable) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

describe.skipIf(!postgres.reachable)('the transactional handler in the Postgres README', () => {
  it('runs as written: it sets up its tables, and a delivery updates the row in the same transaction as its completion', async () => {
    const block = theBlock(README, 'a `transactional: true` handler', (b) => b.lang === 'ts' && b.text.includes('transactional: true'));
    mkdirSync(dir, { recursive: true });
    const file = `${dir}postgres-transactional-${schema}.ts`;
    writeFileSync(file, block.text);
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const secret = 'whsec_readme_snippet';
    Object.assign(process.env, { DATABASE_URL: url.href, WEBHOOK_SECRET: secret });
    const { receiver } = (await import(file)) as { receiver: Receiver };

    await admin.query(`INSERT INTO ${schema}.messages (id) VALUES ('msg_readme')`);
    const delivery = createDelivery('message.delivered', { messageId: 'msg_readme', deliveredAt: '2026-05-01T10:00:00.000Z' });
    const { headers, body } = createSignedPayload(delivery, secret);
    const answer = await receiver.handle({ body: Buffer.from(body as string), headers });
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { ok: true }]);
    const { rows } = await admin.query(`SELECT delivered_at FROM ${schema}.messages WHERE id = 'msg_readme'`);
    expect((rows[0] as { delivered_at: Date }).delivered_at.toISOString()).toBe('2026-05-01T10:00:00.000Z');
    const records = await admin.query(`SELECT state FROM ${schema}.hookline_idempotency WHERE key LIKE '%#mark-delivered'`);
    expect(records.rows).toEqual([{ state: 'c' }]);
  });
});
