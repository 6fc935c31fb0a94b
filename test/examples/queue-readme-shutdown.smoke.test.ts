// The worker of @hookline/bullmq's and @hookline/pg-boss's quick starts, run as a user copies it: the
// README's receiver.ts and worker.ts as written (the stand-in for the user's slow work prints `handled
// <messageId>`), started with node and tsx in a folder whose node_modules is the matching
// example's (its dependencies are the README's install line; @hookline/* resolve to the workspace's
// sources). Once the worker has handled a delivery, SIGTERM must end it by itself, with the README's
// shutdown line only: a connection or timer left open would keep it alive until the platform's SIGKILL.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bullmqQueue } from '@hookline/bullmq';
import type { QueuedDelivery } from '@hookline/core/adapter';
import { pgBossQueue } from '@hookline/pg-boss';
import { postgresStore } from '@hookline/postgres';
import { createDelivery } from '@hookline/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { theBlock } from '../packaging/readme-blocks';
import { DATABASE_URL, REDIS_URL, requirePostgres, requireRedis } from '../support/servers';
import { runUntilHandled } from './support/readme-worker';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const [redis, postgres] = await Promise.all([requireRedis(), requirePostgres()]);
const run = randomUUID().replace(/-/g, '').slice(0, 10);

/** The README's code block that starts with `// <file>`, as written. */
const fileOf = (readme: string, file: string) => theBlock(readme, `the ${file} block`, (block) => block.text.startsWith(`// ${file}`)).text;

/**
 * `source` with `from` replaced by `to`, where `from` occurs exactly once: the one change the test makes
 * to a README's file is to give the queue names of its own, so that runs never share a queue.
 */
function withOwnNames(source: string, from: string, to: string): string {
  const at = source.indexOf(from);
  if (at < 0 || source.indexOf(from, at + 1) >= 0) throw new Error(`expected "${from}" once in:\n${source}`);
  return source.slice(0, at) + to + source.slice(at + from.length);
}

/** A project folder outside the repository whose packages are those of examples/<example>. */
function projectLike(example: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookline-readme-worker-'));
  symlinkSync(join(repo, 'examples', example, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** A delivery as the receiver queues it; its handler's line names its messageId. */
function queued(messageId: string): QueuedDelivery {
  return { delivery: createDelivery('message.delivered', { messageId }), receivedAt: Date.now(), secretIndex: 0 };
}

describe.skipIf(!redis.reachable)('@hookline/bullmq README: the worker', () => {
  const readme = join(repo, 'packages', 'bullmq', 'README.md');
  const name = `hookline-readme-worker-${run}`;
  const producer = bullmqQueue({ connection: { url: REDIS_URL, maxRetriesPerRequest: null }, name, onError: () => {} });
  const messageId = `msg_bullmq_${run}`;
  const job = queued(messageId);
  let dir: string | undefined;

  afterAll(async () => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    await producer.queue.obliterate({ force: true });
    await producer.close();
    // The store's keys of the one delivery: `<namespace>…{<deliveryId>}`.
    const admin = new Redis(REDIS_URL);
    const keys = await admin.keys(`*{${job.delivery.deliveryId}}*`);
    if (keys.length > 0) await admin.del(...keys);
    admin.disconnect();
  });

  it('exits by itself on SIGTERM with the README shutdown line', async () => {
    const receiver = withOwnNames(fileOf(readme, 'receiver.ts'), 'bullmqQueue({ ', 'bullmqQueue({ name: process.env.QUEUE_NAME, ');
    dir = projectLike('queue-bullmq', { 'receiver.ts': receiver, 'worker.ts': fileOf(readme, 'worker.ts') });
    await producer.enqueue(job);
    const exit = await runUntilHandled(dir, messageId, { REDIS_URL, QUEUE_NAME: name });
    expect(exit).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('is the shutdown line the main README and the core README show', () => {
    const line = (text: string) => text.split('\n').find((one) => one.startsWith("process.once('SIGTERM'"));
    const shown = line(fileOf(readme, 'worker.ts'));
    expect(shown).toBeDefined();
    for (const other of [join(repo, 'README.md'), join(repo, 'packages', 'core', 'README.md')]) {
      const block = theBlock(other, 'the queue-mode block', (one) => one.text.includes('receiver.work({ concurrency: 10 })'));
      expect(line(block.text), other).toBe(shown);
    }
  });
});

describe.skipIf(!postgres.reachable)('@hookline/pg-boss README: the worker', () => {
  const readme = join(repo, 'packages', 'pg-boss', 'README.md');
  const bossSchema = `hookline_readme_boss_${run}`;
  const storeSchema = `hookline_readme_store_${run}`;
  const name = 'hookline-readme-worker';
  const producer = pgBossQueue({
    connectionString: DATABASE_URL,
    name,
    bossOptions: { schema: bossSchema, supervise: false, schedule: false, max: 2 },
  });
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  let dir: string | undefined;

  afterAll(async () => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    await producer.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${bossSchema} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${storeSchema} CASCADE`);
    await admin.end();
  });

  it('exits by itself on SIGTERM with the README shutdown line', async () => {
    const receiver = withOwnNames(
      fileOf(readme, 'receiver.ts'),
      'pgBossQueue({ connectionString: process.env.DATABASE_URL })',
      'pgBossQueue({ connectionString: process.env.DATABASE_URL, name: process.env.QUEUE_NAME, bossOptions: { schema: process.env.BOSS_SCHEMA } })',
    );
    dir = projectLike('queue-pg-boss', { 'receiver.ts': receiver, 'worker.ts': fileOf(readme, 'worker.ts') });
    // The store's table, as the user's migrations make it; the README's pool finds it on its search_path.
    await postgresStore({ client: admin, schema: storeSchema }).setup();
    const messageId = `msg_pgboss_${run}`;
    const job = queued(messageId);
    await producer.enqueue(job);
    const databaseUrl = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${storeSchema}`)}`;
    const exit = await runUntilHandled(dir, messageId, {
      DATABASE_URL: databaseUrl,
      QUEUE_NAME: name,
      BOSS_SCHEMA: bossSchema,
    });
    expect(exit).toEqual({ code: 0, signal: null });
  }, 60_000);
});
